# The Python modules (-DSEQGRAD_PYTHON=ON): `seqgrad` (real = float, the library seqgrad) and
# `seqgrad.f64` (real = double, seqgrad_f64), the same binding sources compiled once per library.
# The package is assembled in BUILD/python/seqgrad: the extension modules _core and _core_f64
# beside the Python files of apps/python/seqgrad/, so `PYTHONPATH=BUILD/python` imports it.
#
# The interpreter: Debian's /usr/bin/python3 unless Python3_EXECUTABLE names another (pyenv,
# conda, a venv): -DPython3_EXECUTABLE=$(which python3). pybind11 from Debian (pybind11-dev).

if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)
message(STATUS "seqgrad Python modules for ${Python3_EXECUTABLE} (Python ${Python3_VERSION}); "
               "another interpreter: -DPython3_EXECUTABLE=/path/to/python3")
find_program(SEQGRAD_PATH_PYTHON3 python3 NO_CACHE)
if(SEQGRAD_PATH_PYTHON3 AND NOT SEQGRAD_PATH_PYTHON3 STREQUAL Python3_EXECUTABLE)
  message(STATUS "note: python3 on PATH is ${SEQGRAD_PATH_PYTHON3}, not ${Python3_EXECUTABLE}: "
                 "the modules import only in the latter (choose with -DPython3_EXECUTABLE=...)")
endif()
set(PYBIND11_FINDPYTHON ON)
find_package(pybind11 2.6 CONFIG REQUIRED)

# A module is a shared object: the static libraries it links are compiled position-independent
# (-fPIC; with the option on, the C++ build uses the same objects).
set_target_properties(seqgrad seqgrad_f64 seqgrad_app seqgrad_app_f64
                      PROPERTIES POSITION_INDEPENDENT_CODE ON)

set(SEQGRAD_PYTHON_DIR ${PROJECT_BINARY_DIR}/python/seqgrad)
file(GLOB SEQGRAD_PYTHON_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/apps/python/*.cpp)
file(GLOB_RECURSE SEQGRAD_PYTHON_FILES CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR}/apps/python/seqgrad
     ${PROJECT_SOURCE_DIR}/apps/python/seqgrad/*.py)

function(seqgrad_python_module name app_library)
  # NO_EXTRAS: no link-time optimisation (it would recompile the libraries at every link)
  pybind11_add_module(${name} NO_EXTRAS ${SEQGRAD_PYTHON_SOURCES})
  target_compile_definitions(${name} PRIVATE SEQGRAD_PYTHON_MODULE=${name})
  target_compile_options(${name} PRIVATE ${SEQGRAD_WARNINGS})
  target_include_directories(${name} PRIVATE ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(${name} PRIVATE ${app_library})
  set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${SEQGRAD_PYTHON_DIR})
endfunction()
seqgrad_python_module(_core seqgrad_app)
seqgrad_python_module(_core_f64 seqgrad_app_f64)

# The Python files, copied next to the modules at build time (a change is picked up by the next
# build).
set(SEQGRAD_PYTHON_COPIES "")
foreach(file ${SEQGRAD_PYTHON_FILES})
  add_custom_command(OUTPUT ${SEQGRAD_PYTHON_DIR}/${file}
    COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/apps/python/seqgrad/${file}
            ${SEQGRAD_PYTHON_DIR}/${file}
    DEPENDS ${PROJECT_SOURCE_DIR}/apps/python/seqgrad/${file})
  list(APPEND SEQGRAD_PYTHON_COPIES ${SEQGRAD_PYTHON_DIR}/${file})
endforeach()
add_custom_target(seqgrad_python_files ALL DEPENDS ${SEQGRAD_PYTHON_COPIES})
add_custom_target(python DEPENDS _core _core_f64 seqgrad_python_files)

# `cmake --install BUILD --component python --prefix P` (what `pip install .` runs) puts the
# package in P/seqgrad; SEQGRAD_PYTHON_INSTALL_DIR is the folder under the prefix (default: none,
# the prefix itself is the site-packages folder).
set(SEQGRAD_PYTHON_INSTALL_DIR "." CACHE STRING "Where `seqgrad/` goes under the install prefix")
install(TARGETS _core _core_f64 LIBRARY DESTINATION ${SEQGRAD_PYTHON_INSTALL_DIR}/seqgrad
        COMPONENT python EXCLUDE_FROM_ALL)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/apps/python/seqgrad/ DESTINATION ${SEQGRAD_PYTHON_INSTALL_DIR}/seqgrad
        COMPONENT python EXCLUDE_FROM_ALL FILES_MATCHING PATTERN "*.py")
