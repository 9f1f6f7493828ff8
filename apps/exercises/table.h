// The learner's functions as a table of pointers: what the grader and the capstone call, so that
// the test build can swap one exercise for a wrong answer compiled in a namespace of its own.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "apps/exercises/exercise.h"

namespace seqgrad::grading {

// clang-format off
#define SEQGRAD_EXERCISE_FUNCTIONS(X) \
    X(1, tanh) \
    X(1, sigmoid) \
    X(2, add) \
    X(2, mul) \
    X(3, matmul) \
    X(4, log_softmax) \
    X(5, cross_entropy) \
    X(6, gru_cell_composed) \
    X(7, gru_cell_fused) \
    X(8, lstm_cell) \
    X(9, padding_mask) \
    X(9, masked_softmax) \
    X(10, bahdanau_scores) \
    X(10, attention_context) \
    X(11, luong_dot_scores) \
    X(11, luong_general_scores) \
    X(12, adam_update) \
    X(12, clip_grad_norm) \
    X(13, greedy_decode) \
    X(14, beam_step) \
    X(15, corpus_bleu) \
    X(16, layer_norm) \
    X(17, split_heads) \
    X(17, merge_heads) \
    X(17, causal_mask) \
    X(17, scaled_dot_product_attention)
// clang-format on

struct ExerciseTable {
#define SEQGRAD_TABLE_MEMBER(number, name) decltype(&exercises::name) name = nullptr;
    SEQGRAD_EXERCISE_FUNCTIONS(SEQGRAD_TABLE_MEMBER)
#undef SEQGRAD_TABLE_MEMBER
};

// Points the entries of exercise `number` at the functions of namespace `ns` (the test build's
// wrong answers: ns = seqgrad::wrong_07_...).
#define SEQGRAD_TABLE_SET(number, name) \
    if (exercise == number) table.name = &ns_::name;
#define SEQGRAD_INSTALL_EXERCISE(table_, exercise_, ns) \
    do {                                                \
        namespace ns_ = ns;                             \
        auto& table = table_;                           \
        const int exercise = exercise_;                 \
        SEQGRAD_EXERCISE_FUNCTIONS(SEQGRAD_TABLE_SET)   \
    } while (0)

// The learner's own functions (the library the grader was linked with).
ExerciseTable learner_table();

// Replacements the test build links in: a name ("07_gru_cell_fused__no_z") and what it changes.
struct Variant {
    std::string name;
    int exercise;
    std::function<void(ExerciseTable&)> install;
};
const std::vector<Variant>& variants();

}  // namespace seqgrad::grading
