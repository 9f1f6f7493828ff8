# The exercises (included by the top CMakeLists.txt).
#
# A learner's files (SEQGRAD_EXERCISES_DIR/NN_name.cpp) are compiled into small libraries of
# their own, never into seqgrad or the `seqgrad` command, and every target here is outside `all`:
# a file that does not compile cannot break the rest of the build. `seqgrad exercises` builds
# them when they are missing or stale (apps/cli/cmd_exercises.cpp).
#   seqgrad-exercises        the grader: the learner's files against seqgrad_f64 (double, so
#                            gradient checks are sharp) + the checks
#   seqgrad-exercises-train  the capstone: the same files again against seqgrad (float, for
#                            training speed) + the date model
# Changing SEQGRAD_EXERCISES_DIR recompiles only the learner's files and relinks these two.
set(SEQGRAD_EXERCISES_DIR ${PROJECT_SOURCE_DIR}/exercises CACHE PATH
    "Folder of the learner's exercise files (NN_name.cpp)")
get_filename_component(SEQGRAD_EXERCISES_DIR_ABS ${SEQGRAD_EXERCISES_DIR} ABSOLUTE
                       BASE_DIR ${CMAKE_BINARY_DIR})
# what `seqgrad exercises` reads to find the folder (rewritten only when it changes)
file(WRITE ${PROJECT_BINARY_DIR}/generated/exercises-dir.txt.tmp "${SEQGRAD_EXERCISES_DIR_ABS}\n")
configure_file(${PROJECT_BINARY_DIR}/generated/exercises-dir.txt.tmp
               ${PROJECT_BINARY_DIR}/exercises-dir.txt COPYONLY)

set(SEQGRAD_EXERCISE_ROOT ${PROJECT_SOURCE_DIR}/apps/exercises)
# The grader's checks, compiled once per build tree (double).
add_library(seqgrad_exercise_grader STATIC EXCLUDE_FROM_ALL
  ${SEQGRAD_EXERCISE_ROOT}/grader.cpp ${SEQGRAD_EXERCISE_ROOT}/compare.cpp
  ${SEQGRAD_EXERCISE_ROOT}/checks_ops.cpp ${SEQGRAD_EXERCISE_ROOT}/checks_layers.cpp
  ${SEQGRAD_EXERCISE_ROOT}/checks_optim.cpp ${SEQGRAD_EXERCISE_ROOT}/checks_decoding.cpp
  ${SEQGRAD_EXERCISE_ROOT}/checks_bleu.cpp ${SEQGRAD_EXERCISE_ROOT}/checks_transformer.cpp
  ${SEQGRAD_EXERCISE_ROOT}/beam_reference.cpp
  ${SEQGRAD_EXERCISE_ROOT}/learner_table.cpp)
target_compile_options(seqgrad_exercise_grader PRIVATE ${SEQGRAD_WARNINGS})
target_link_libraries(seqgrad_exercise_grader PUBLIC seqgrad_f64)
# The capstone's model and parts, compiled once per build tree (float).
add_library(seqgrad_exercise_capstone STATIC EXCLUDE_FROM_ALL
  ${SEQGRAD_EXERCISE_ROOT}/capstone.cpp ${SEQGRAD_EXERCISE_ROOT}/capstone_parts.cpp
  ${SEQGRAD_EXERCISE_ROOT}/learner_table.cpp)
target_compile_options(seqgrad_exercise_capstone PRIVATE ${SEQGRAD_WARNINGS})
target_compile_definitions(seqgrad_exercise_capstone PRIVATE
  SEQGRAD_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(seqgrad_exercise_capstone PUBLIC seqgrad)

# seqgrad_exercise_set(SUFFIX DIR [VARIANTS_SOURCE]): the learner's files of DIR as two small
# libraries (double and float) and the programs seqgrad-exercises${SUFFIX} and
# seqgrad-exercises-train${SUFFIX}. VARIANTS_SOURCE (tests only) lists replacement answers.
function(seqgrad_exercise_set suffix dir)
  file(GLOB files CONFIGURE_DEPENDS ${dir}/[0-9][0-9]_*.cpp)
  set(variants ${SEQGRAD_EXERCISE_ROOT}/no_variants.cpp)
  if(ARGC GREATER 2)
    set(variants ${ARGN})
  endif()
  foreach(kind f64 float)
    set(lib seqgrad_exercise_work_${kind}${suffix})
    add_library(${lib} STATIC EXCLUDE_FROM_ALL ${files})
    # skeletons name every parameter but use none of them yet
    target_compile_options(${lib} PRIVATE ${SEQGRAD_WARNINGS} -Wno-unused-parameter)
    target_include_directories(${lib} PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${lib} PUBLIC $<IF:$<STREQUAL:${kind},f64>,seqgrad_f64,seqgrad>)
  endforeach()
  add_executable(seqgrad-exercises${suffix} EXCLUDE_FROM_ALL ${variants})
  target_include_directories(seqgrad-exercises${suffix} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_options(seqgrad-exercises${suffix} PRIVATE ${SEQGRAD_WARNINGS})
  target_link_libraries(seqgrad-exercises${suffix} PRIVATE seqgrad_exercise_grader
                        seqgrad_exercise_work_f64${suffix})
  add_executable(seqgrad-exercises-train${suffix} EXCLUDE_FROM_ALL
                 ${SEQGRAD_EXERCISE_ROOT}/no_variants.cpp)
  target_include_directories(seqgrad-exercises-train${suffix} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(seqgrad-exercises-train${suffix} PRIVATE seqgrad_exercise_capstone
                        seqgrad_exercise_work_float${suffix})
  # next to `seqgrad`, which looks for them there
  set_target_properties(seqgrad-exercises${suffix} seqgrad-exercises-train${suffix} PROPERTIES
                        RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
endfunction()

target_include_directories(seqgrad_exercise_grader PUBLIC ${PROJECT_SOURCE_DIR})
target_include_directories(seqgrad_exercise_capstone PUBLIC ${PROJECT_SOURCE_DIR})
seqgrad_exercise_set("" ${SEQGRAD_EXERCISES_DIR_ABS})
