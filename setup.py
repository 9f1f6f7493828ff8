"""pip's build of the Python modules: CMake configures the checkout with -DSEQGRAD_PYTHON=ON for
the interpreter running pip, builds the target `python`, and installs its component into the
wheel's folder (apps/python/python.cmake). The build folder, build-python/ (or
SEQGRAD_PYTHON_BUILD_DIR), is kept, so a second install recompiles only what changed."""

import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class CMakeBuild(build_ext):
    def run(self):
        root = os.path.dirname(os.path.abspath(__file__))
        build = os.environ.get("SEQGRAD_PYTHON_BUILD_DIR", os.path.join(root, "build-python"))
        configure = ["cmake", "-S", root, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                     "-DSEQGRAD_PYTHON=ON", "-DSEQGRAD_BUILD_TESTS=OFF",
                     "-DSEQGRAD_BUILD_BENCH=OFF", "-DPython3_EXECUTABLE=" + sys.executable]
        if shutil.which("ccache"):
            configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", build, "--target", "python", "-j",
                               str(os.cpu_count() or 2)])
        subprocess.check_call(["cmake", "--install", build, "--component", "python",
                               "--prefix", os.path.abspath(self.build_lib)])


# The extension is built by CMake above; declaring it makes the wheel platform-specific.
setup(ext_modules=[Extension("seqgrad._core", sources=[])], cmdclass={"build_ext": CMakeBuild})
