// What every exercise file includes: the functions a learner writes (declared here with the
// signatures the grader calls), the plain-data types of the decoding and BLEU exercises, and
// NOT_IMPLEMENTED(), which a skeleton's body calls so that the grader reports "not done".
//
// The functions live in namespace seqgrad::exercises; the shared types in seqgrad::practice
// (the test build compiles wrong answers in namespaces of their own and keeps these types).
// Each exercise file's comment gives the maths and the shapes; `seqgrad exercises hint N`
// names the library function whose code is the answer.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "seqgrad/autograd/ops.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/models/model/step_model.h"

namespace seqgrad::practice {

// Thrown by NOT_IMPLEMENTED(): the grader reports the exercise as not done (·).
struct NotImplemented : std::runtime_error {
    explicit NotImplemented(const std::string& where)
        : std::runtime_error("not implemented: " + where) {}
};

// ---- 14: one beam-search step ----
struct BeamHypothesis {
    std::vector<int32_t> tokens;  // output tokens (no SOS); a finished one ends with EOS
    double log_prob = 0;          // Σ_t log p(y_t | y_<t, x): raw, never normalised
    double score = 0;             // finished only: log_prob / lp(tokens.size())
};
struct BeamConfig {
    int beam_size = 3;    // K
    double alpha = 1.0;   // lp(n) = n^alpha
    int max_length = 10;  // M: the most tokens (EOS included) a hypothesis may have
    int32_t eos = 2;      // PAD = 0 and SOS = 1 are never produced
};
struct BeamState {
    std::vector<BeamHypothesis> live;      // unfinished, best log_prob first
    std::vector<BeamHypothesis> finished;  // ended with EOS, in the order they finished
    bool done = false;                     // the stopping rule says stop
};

// ---- 15: corpus BLEU ----
using Tokens = std::vector<std::string>;

}  // namespace seqgrad::practice

// The body of an exercise that is not done yet.
#define NOT_IMPLEMENTED() throw ::seqgrad::practice::NotImplemented(__func__)

namespace seqgrad::exercises {
using namespace seqgrad::practice;
#include "apps/exercises/exercise_functions.inc"
}  // namespace seqgrad::exercises
