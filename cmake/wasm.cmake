# The WebAssembly build (-DSEQGRAD_WASM=ON under emcmake; included by CMakeLists.txt, which stops
# after it): the same library sources compiled by Debian's emscripten, one thread, the kernels of
# SEQGRAD_KERNELS (fast by default: autograd/kernels/fast/, whose 8-lane vectors -msimd128 turns
# into pairs of WebAssembly SIMD registers), with the product BLAS would compute done by the SIMD
# product of autograd/kernels/wasm/ (no BLAS exists there).
#   emcmake cmake -S . -B build-wasm -DSEQGRAD_WASM=ON && cmake --build build-wasm -j2
# Targets
#   seqgrad, seqgrad_f64   the library in float and in double (static, wasm objects)
#   seqgrad_live           apps/explore/live/: the page's engine, one JavaScript file holding its
#                          wasm module in base64 (what `seqgrad explore --live` puts in the page)
#   wasm_test_*            a gradient-check subset of the unit tests, run by ctest under node
# Build with EMSDK_PYTHON=/usr/bin/python3 when python3 on PATH is another one (a pyenv shim
# makes every compiler call seconds slower).
# fmt is used header-only (FMT_HEADER_ONLY) and nlohmann/json and doctest are header-only: their
# Debian headers are reached through links in the build folder, never through /usr/include itself
# (whose C library headers are not emscripten's).
if(NOT EMSCRIPTEN)
  message(FATAL_ERROR "SEQGRAD_WASM needs emscripten's toolchain: emcmake cmake -S . -B build-wasm -DSEQGRAD_WASM=ON")
endif()
set(SEQGRAD_WASM_INCLUDE ${PROJECT_BINARY_DIR}/wasm-include)
file(MAKE_DIRECTORY ${SEQGRAD_WASM_INCLUDE})
foreach(header_dir nlohmann fmt doctest)
  find_path(${header_dir}_HEADERS ${header_dir} PATHS /usr/include NO_CMAKE_FIND_ROOT_PATH NO_DEFAULT_PATH)
  if(NOT ${header_dir}_HEADERS)
    message(FATAL_ERROR "SEQGRAD_WASM: the ${header_dir} headers were not found in /usr/include (Debian: nlohmann-json3-dev libfmt-dev doctest-dev)")
  endif()
  file(CREATE_LINK ${${header_dir}_HEADERS}/${header_dir} ${SEQGRAD_WASM_INCLUDE}/${header_dir} SYMBOLIC)
endforeach()

# the kernels' sources: autograd/kernels/fast/ only in the fast build
set(SEQGRAD_WASM_KERNEL_DIRS ${PROJECT_SOURCE_DIR}/autograd/kernels/*.cpp
                             ${PROJECT_SOURCE_DIR}/autograd/kernels/wasm/*.cpp)
if(SEQGRAD_FAST_KERNELS)
  list(APPEND SEQGRAD_WASM_KERNEL_DIRS ${PROJECT_SOURCE_DIR}/autograd/kernels/fast/*.cpp)
endif()
file(GLOB SEQGRAD_SOURCES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/autograd/*.cpp
  ${SEQGRAD_WASM_KERNEL_DIRS}
  ${PROJECT_SOURCE_DIR}/layers/*.cpp
  ${PROJECT_SOURCE_DIR}/optim/*.cpp
  ${PROJECT_SOURCE_DIR}/models/*/*.cpp
  ${PROJECT_SOURCE_DIR}/data/*.cpp)
# what the page uses of apps/: the attention readers, the studies and the explorer's data builders
# (not its HTML writer, nor the command line)
file(GLOB SEQGRAD_WASM_APP_SOURCES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/apps/attention/*.cpp
  ${PROJECT_SOURCE_DIR}/apps/studies/*.cpp
  ${PROJECT_SOURCE_DIR}/apps/explore/*.cpp)
list(FILTER SEQGRAD_WASM_APP_SOURCES EXCLUDE REGEX ".*/explore_html\\.cpp$")

# -msimd128: WebAssembly SIMD (every current browser, node >= 16). -fwasm-exceptions: the engine
# reports bad input by throwing, and WebAssembly's own exceptions cost nothing until one is
# thrown (emscripten's default, exceptions through JavaScript, wraps every call that may throw).
set(SEQGRAD_WASM_FLAGS -msimd128 -fno-math-errno -fwasm-exceptions)
set(SEQGRAD_WASM_LINK_FLAGS -sALLOW_MEMORY_GROWTH=1 -fwasm-exceptions)

# The float library has every source the page uses; the double one (gradient checks only) the
# engine, the layers and the optimizers. Unity builds (a dozen sources per compiler run): most of
# a compile here is reading the same headers again.
file(GLOB SEQGRAD_WASM_F64_SOURCES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/autograd/*.cpp
  ${SEQGRAD_WASM_KERNEL_DIRS}
  ${PROJECT_SOURCE_DIR}/layers/*.cpp
  ${PROJECT_SOURCE_DIR}/optim/*.cpp)
# (the fused cells' files each define their own helpers of the same names: compiled apart; so
# are the fast kernels' few files, which keeps the other batches as in the reference build)
file(GLOB SEQGRAD_WASM_OWN_UNIT CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/autograd/ops_fused_*.cpp
     ${PROJECT_SOURCE_DIR}/autograd/kernels/fast/*.cpp)
set_source_files_properties(${SEQGRAD_WASM_OWN_UNIT} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
function(seqgrad_wasm_library name real)
  add_library(${name} STATIC ${ARGN})
  set_target_properties(${name} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 12)
  target_compile_definitions(${name} PUBLIC SEQGRAD_REAL=${real}
                                            SEQGRAD_FAST_KERNELS=${SEQGRAD_FAST_KERNELS}
                                            SEQGRAD_WASM=1 FMT_HEADER_ONLY=1)
  # -Wno-unused-private-field: clang's warning for members only some builds read (GCC has none)
  target_compile_options(${name} PUBLIC ${SEQGRAD_WASM_FLAGS} -Wno-unused-private-field
                                 PRIVATE -Wall -Wextra)
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/include
                                            ${SEQGRAD_WASM_INCLUDE})
  target_link_options(${name} PUBLIC ${SEQGRAD_WASM_LINK_FLAGS})
endfunction()
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/include)
file(CREATE_LINK ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/include/seqgrad SYMBOLIC)
seqgrad_wasm_library(seqgrad float ${SEQGRAD_SOURCES} ${SEQGRAD_WASM_APP_SOURCES})
seqgrad_wasm_library(seqgrad_f64 double ${SEQGRAD_WASM_F64_SOURCES})

if(EXISTS ${PROJECT_SOURCE_DIR}/apps/explore/live/live.cmake)
  include(${PROJECT_SOURCE_DIR}/apps/explore/live/live.cmake)
endif()

# Tests under node: the gradient checks of the ops, the GRU cell and layer, and attention in
# double, the WebAssembly product against its reference in float, and the fast kernels against
# theirs.
if(SEQGRAD_BUILD_TESTS)
  enable_testing()
  # node itself, not emcmake's emulator line (whose --experimental-wasm-threads newer node
  # refuses): SIMD and WebAssembly exceptions need no flag since node 17
  find_program(SEQGRAD_NODE NAMES node nodejs REQUIRED)
  add_library(wasm_doctest_main OBJECT ${PROJECT_SOURCE_DIR}/tests/doctest_main.cpp)
  target_include_directories(wasm_doctest_main PRIVATE ${SEQGRAD_WASM_INCLUDE})
  target_compile_options(wasm_doctest_main PRIVATE ${SEQGRAD_WASM_FLAGS})
  # name, the library it links and its sources (under tests/, "+" between them): the checks in
  # double, the SIMD product in float; the fast kernels against their references (both
  # precisions, one program), but for the case that needs a second thread
  set(SEQGRAD_WASM_TESTS test_autograd_ops:seqgrad_f64:unit/test_autograd_ops
      test_gru:seqgrad_f64:unit/test_gru test_attention:seqgrad_f64:unit/test_attention
      test_wasm_kernels:seqgrad:wasm/test_wasm_kernels)
  if(SEQGRAD_FAST_KERNELS)
    list(APPEND SEQGRAD_WASM_TESTS test_fast:seqgrad_f64:unit/test_fast_kernels+unit/test_fast_gemm)
  endif()
  foreach(test ${SEQGRAD_WASM_TESTS})
    string(REPLACE ":" ";" parts ${test})
    list(GET parts 0 stem)
    list(GET parts 1 lib)
    list(GET parts 2 sources)
    string(REPLACE "+" ";" sources ${sources})
    list(TRANSFORM sources PREPEND ${PROJECT_SOURCE_DIR}/tests/)
    list(TRANSFORM sources APPEND .cpp)
    add_executable(wasm_${stem} ${sources} $<TARGET_OBJECTS:wasm_doctest_main>)
    target_include_directories(wasm_${stem} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
    target_compile_options(wasm_${stem} PRIVATE -Wall -Wextra)
    target_compile_definitions(wasm_${stem} PRIVATE SEQGRAD_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
    target_link_libraries(wasm_${stem} PRIVATE ${lib})
    # one file (the module in base64 inside the JavaScript), the real file system of node
    target_link_options(wasm_${stem} PRIVATE -sNODERAWFS=1 -sSINGLE_FILE=1)
    add_test(NAME wasm/${stem} COMMAND ${SEQGRAD_NODE} $<TARGET_FILE:wasm_${stem}>
                                       "--test-case-exclude=*over threads*")
    set_tests_properties(wasm/${stem} PROPERTIES LABELS wasm)
  endforeach()
endif()
