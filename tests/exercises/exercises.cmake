# The grader's tests (included by tests/CMakeLists.txt).
#
# Built in this build tree, on the same engine libraries: the shipped skeletons (exercises/) and
# the reference solutions (tests/exercises/solutions/), each as the two small libraries and two
# programs of apps/exercises/exercises.cmake. The solutions' grader also links the wrong answers
# of tests/exercises/wrong/ (each compiled in a namespace of its own, `--replace NAME` swaps one
# in) and the mutants of tests/exercises/mutants.cpp. These targets are outside `all`: the test
# exercises/build builds them, and every other exercises test needs it.
set(ex_tests ${CMAKE_CURRENT_SOURCE_DIR}/exercises)
set(ex_gen ${CMAKE_CURRENT_BINARY_DIR}/exercises_generated)
file(MAKE_DIRECTORY ${ex_gen})

# The wrong answers: NN_name__mistake.cpp, whose first line is "// expect: REGEX" (the diagnosis).
# Each is compiled in a namespace of its own (`exercises` defined as wrong_NN_name__mistake), eight
# to a compiler run (wrong_batch_N.cpp): most of a compile is reading the engine's headers.
file(GLOB ex_wrong CONFIGURE_DEPENDS ${ex_tests}/wrong/*.cpp)
set(ex_batch_size 8)
set(ex_batches "")
set(ex_batch_text "")
set(ex_in_batch 0)
list(LENGTH ex_wrong ex_wrong_count)
set(ex_register "// Generated from tests/exercises/wrong/ by tests/exercises/exercises.cmake.\n#include \"apps/exercises/table.h\"\n#include \"tests/exercises/mutants.h\"\n")
set(ex_entries "")
set(ex_wrong_names "")
foreach(file ${ex_wrong})
  get_filename_component(stem ${file} NAME_WE)
  string(MAKE_C_IDENTIFIER "wrong_${stem}" ns)
  string(SUBSTRING ${stem} 0 2 number)
  math(EXPR number "${number}")
  # the functions exercise.h declares, in the answer's namespace
  set(ex_declare "#define exercises ${ns}\nnamespace seqgrad::exercises {\nusing namespace seqgrad::practice;\n#include \"apps/exercises/exercise_functions.inc\"\n}\n")
  # the answer after them, as when compiled alone with -Dexercises=NS
  string(APPEND ex_batch_text "${ex_declare}#include \"${file}\"\n#undef exercises\n")
  math(EXPR ex_in_batch "${ex_in_batch} + 1")
  list(LENGTH ex_wrong_names ex_done)
  math(EXPR ex_done "${ex_done} + 1")
  if(ex_in_batch EQUAL ex_batch_size OR ex_done EQUAL ex_wrong_count)
    list(LENGTH ex_batches ex_batch)
    file(WRITE ${ex_gen}/wrong_batch_${ex_batch}.cpp.tmp "// Generated from tests/exercises/wrong/ by tests/exercises/exercises.cmake.\n#include \"apps/exercises/exercise.h\"\n${ex_batch_text}")
    configure_file(${ex_gen}/wrong_batch_${ex_batch}.cpp.tmp ${ex_gen}/wrong_batch_${ex_batch}.cpp COPYONLY)
    list(APPEND ex_batches ${ex_gen}/wrong_batch_${ex_batch}.cpp)
    set(ex_batch_text "")
    set(ex_in_batch 0)
  endif()
  string(APPEND ex_register "${ex_declare}#undef exercises\n")
  string(APPEND ex_entries "        {\"${stem}\", ${number}, [](ExerciseTable& t) { SEQGRAD_INSTALL_EXERCISE(t, ${number}, seqgrad::${ns}); }},\n")
  list(APPEND ex_wrong_names ${stem})
endforeach()
string(APPEND ex_register "namespace seqgrad::grading {\nconst std::vector<Variant>& variants() {\n    static const std::vector<Variant> list = [] {\n        std::vector<Variant> out = {\n${ex_entries}        };\n        for (Variant& m : mutants::all()) out.push_back(m);\n        return out;\n    }();\n    return list;\n}\n}  // namespace seqgrad::grading\n")
file(WRITE ${ex_gen}/variants.cpp.tmp "${ex_register}")
configure_file(${ex_gen}/variants.cpp.tmp ${ex_gen}/variants.cpp COPYONLY)

seqgrad_exercise_set(-solutions ${ex_tests}/solutions
                     ${ex_gen}/variants.cpp ${ex_tests}/mutants.cpp ${ex_batches})
# the wrong answers keep the names a patch left unused
target_compile_options(seqgrad-exercises-solutions PRIVATE -Wno-unused-parameter -Wno-unused-variable)
# the solutions, in two compiler runs per library (a learner's files are still compiled one by one)
set_target_properties(seqgrad_exercise_work_f64-solutions seqgrad_exercise_work_float-solutions
                      PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 9)
# The shipped skeletons: the default set when SEQGRAD_EXERCISES_DIR is exercises/ itself.
if(SEQGRAD_EXERCISES_DIR_ABS STREQUAL "${PROJECT_SOURCE_DIR}/exercises")
  set(ex_skeletons seqgrad-exercises)
else()
  seqgrad_exercise_set(-skeletons ${PROJECT_SOURCE_DIR}/exercises)
  set(ex_skeletons seqgrad-exercises-skeletons)
endif()

# exercises_expect STATUS PATTERN... -- COMMAND: the exit status and a line matching each
# pattern (a regular expression, matched on the UTF-8 text whatever the locale)
add_executable(exercises_expect EXCLUDE_FROM_ALL ${ex_tests}/expect.cpp)
target_compile_options(exercises_expect PRIVATE ${SEQGRAD_WARNINGS})
set(ex_expect $<TARGET_FILE:exercises_expect>)
add_test(NAME exercises/build
         COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target ${ex_skeletons}
                 seqgrad-exercises-solutions seqgrad-exercises-train-solutions exercises_expect)
set_tests_properties(exercises/build PROPERTIES FIXTURES_SETUP exercises RESOURCE_LOCK build_tree
                     LABELS "build;exercises" TIMEOUT 900 COST 200)
function(seqgrad_exercise_test name)
  add_test(NAME exercises/${name} COMMAND ${ARGN})
  set_tests_properties(exercises/${name} PROPERTIES FIXTURES_REQUIRED exercises LABELS exercises
                       ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
endfunction()
set(ex_skeleton_bin ${CMAKE_BINARY_DIR}/${ex_skeletons})
set(ex_solution_bin ${CMAKE_BINARY_DIR}/seqgrad-exercises-solutions)

# The checker reads UTF-8 under the C locale: `·+` is one or more middle dots (U+00B7, bytes C2 B7),
# never C2 followed by B7 repeated.
add_test(NAME exercises/expect_reads_utf8
         COMMAND ${ex_expect} 0 "^a ·+ b$" -- printf "a \\302\\267\\302\\267 b\\n")
add_test(NAME exercises/expect_reads_utf8_not_bytes
         COMMAND ${ex_expect} 0 "^a ·+ b$" -- printf "a \\302\\267\\267 b\\n")
set_tests_properties(exercises/expect_reads_utf8 exercises/expect_reads_utf8_not_bytes PROPERTIES
                     FIXTURES_REQUIRED exercises LABELS exercises ENVIRONMENT "LC_ALL=C")
set_tests_properties(exercises/expect_reads_utf8_not_bytes PROPERTIES
                     PASS_REGULAR_EXPRESSION "expect: no match for: \\^a")

# The skeletons compile, every exercise is reported not done, the exit status is 1.
seqgrad_exercise_test(skeletons_are_not_done ${ex_expect} 1 "0 of 17 passed"
  "01_tanh_sigmoid +·+ +· not done" "15_corpus_bleu +·+ +· not done" "17_multihead_attention +·+ +· not done" -- ${ex_skeleton_bin} check --seed 1)
# The solutions pass every exercise, with two seeds of random shapes.
foreach(seed 1 2)
  seqgrad_exercise_test(solutions_pass_seed${seed} ${ex_expect} 0 "17 of 17 passed" --
                        ${ex_solution_bin} check --seed ${seed})
endforeach()
seqgrad_exercise_test(list_and_hint ${ex_expect} 0 "14_beam_step" "beam_search.cpp" --
                      sh -c "${ex_solution_bin} list && ${ex_solution_bin} hint 14")
# Each wrong answer fails its exercise with the diagnosis its first line names.
foreach(stem ${ex_wrong_names})
  file(STRINGS ${ex_tests}/wrong/${stem}.cpp expect REGEX "^// expect: " LIMIT_COUNT 1)
  string(REPLACE "// expect: " "" expect "${expect}")
  string(SUBSTRING ${stem} 0 2 number)
  set(extra "")
  if(stem MATCHES "loop")
    set(extra --timeout 2)
  endif()
  seqgrad_exercise_test(wrong/${stem} ${ex_expect} 1 "${expect}" --
                        ${ex_solution_bin} check ${number} --replace ${stem} --seed 1 ${extra})
endforeach()
# A crash and an endless loop are reported, and the exercises after them still run and pass.
seqgrad_exercise_test(crash_and_loop_the_rest_run ${ex_expect} 1
  "07 crashed \\(SIGSEGV\\) in the backward" "timed out after 2 s" "08_lstm_cell .*passed"
  "14_beam_step .*passed" "3 of 5 passed" --
  ${ex_solution_bin} check 6 7 8 13 14 --replace 07_gru_cell_fused__crash_in_backward
  --replace 13_greedy_decode__endless_loop --timeout 2 --seed 3)
# Mistakes the grader was not written against: random perturbations of the solutions.
seqgrad_exercise_test(mutants_are_caught sh ${ex_tests}/mutants.sh ${ex_solution_bin})
# The capstone with the solutions' parts reaches 99% exact match (it trains: label train). Two
# epochs instead of the config's three keep it short: 99.95% measured.
add_test(NAME exercises/train_dates_with_the_solutions
         COMMAND ${ex_expect} 0 "GRU cell \\(decoder\\) +yours" "exact match on the 2000 test dates: (99|100)\\." --
                 ${CMAKE_BINARY_DIR}/seqgrad-exercises-train-solutions --set train.epochs=2)
set_tests_properties(exercises/train_dates_with_the_solutions PROPERTIES
                     FIXTURES_REQUIRED exercises LABELS "train;exercises" TIMEOUT 600 COST 20)
# `seqgrad exercises` runs the grader next to it (only when that grader is the skeletons').
if(ex_skeletons STREQUAL "seqgrad-exercises")
  seqgrad_exercise_test(command_runs_the_grader ${ex_expect} 1 "01_tanh_sigmoid +·+ +· not done"
                        "0 of 1 passed" -- ${CMAKE_BINARY_DIR}/seqgrad exercises check 1 --no-build --seed 1)
endif()
# `hint N` names files and functions that exist.
seqgrad_exercise_test(hints_point_at_code sh ${ex_tests}/hints.sh ${ex_solution_bin} ${PROJECT_SOURCE_DIR})
