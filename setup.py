"""pip's build of the Python modules: CMake configures the checkout with -DSEQGRAD_PYTHON=ON for
the interpreter running pip, builds the target `python`, and installs its component into the
wheel's folder (apps/python/python.cmake). The build folder, build-python/ (or
SEQGRAD_PYTHON_BUILD_DIR), is kept, so a second install recompiles only what changed. A folder
already configured for the same interpreter (the same file once links are followed: a venv's
python is a link to it), such as the build the tests use, is built as it is configured."""

import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(os.environ.get("SEQGRAD_PYTHON_BUILD_DIR", os.path.join(ROOT, "build-python")))
os.makedirs(BUILD, exist_ok=True)


def configured_interpreter(build):
    """The interpreter an existing build folder's CMakeCache.txt was configured for, or None
    (Python3_EXECUTABLE when given on the command line, else FindPython's _Python3_EXECUTABLE)."""
    try:
        with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as cache:
            for line in cache:
                match = re.match(r"_?Python3_EXECUTABLE:\w+=(.*)", line.strip())
                if match:
                    return match.group(1)
    except OSError:
        pass
    return None


class CMakeBuild(build_ext):
    def run(self):
        configured = configured_interpreter(BUILD)
        if configured and os.path.realpath(configured) == os.path.realpath(sys.executable):
            configure = ["cmake", "-S", ROOT, "-B", BUILD, "-DSEQGRAD_PYTHON=ON"]
        else:
            configure = ["cmake", "-S", ROOT, "-B", BUILD, "-DCMAKE_BUILD_TYPE=Release",
                         "-DSEQGRAD_PYTHON=ON", "-DSEQGRAD_BUILD_TESTS=OFF",
                         "-DSEQGRAD_BUILD_BENCH=OFF", "-DPython3_EXECUTABLE=" + sys.executable]
            if shutil.which("ccache"):
                configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", BUILD, "--target", "python", "-j",
                               str(os.cpu_count() or 2)])
        subprocess.check_call(["cmake", "--install", BUILD, "--component", "python",
                               "--prefix", os.path.abspath(self.build_lib)])


# The extension is built by CMake above; declaring it makes the wheel platform-specific.
# setuptools' own scratch folders go under the CMake build folder, not in the checkout's build/.
setup(ext_modules=[Extension("seqgrad._core", sources=[])], cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": os.path.join(BUILD, "setuptools")},
               "egg_info": {"egg_base": BUILD}})
