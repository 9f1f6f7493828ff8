// The grader's parts: an exercise is a list of checks; each check runs the learner's code and
// returns "" (pass) or a diagnosis; NotImplemented makes it "not done". Every exercise runs in a
// child process (grader.cpp), which reports its checks and the phase it is in through a pipe,
// so that a crash or an endless loop is reported with where it happened and the rest still run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "apps/exercises/table.h"
#include "seqgrad/autograd/rng.h"
#include "seqgrad/autograd/tensor.h"

namespace seqgrad::grading {

// Runs inside the child: writes each check's result and the current phase to the pipe.
class Grader {
  public:
    Grader(int fd, uint64_t seed, const ExerciseTable& table) : fd_(fd), seed_(seed), t(table) {}
    // "forward", "backward", "decoding"...: a crash is reported as "crashed (SIGSEGV) in the
    // <phase>"
    void phase(const std::string& name);
    // Runs `fn`: "" = pass, else the diagnosis. NotImplemented = not done, any other exception
    // = fail with its message.
    void check(const std::string& name, const std::function<std::string()>& fn);
    // check() with `fn` in a child process of its own: a crash there fails this check only
    // ("crashed (SIGSEGV) in the <phase>", then ": <crash_diagnosis>" when the phase begins with
    // "backward"), and the exercise's other checks still run.
    void check_in_child(const std::string& name, const std::function<std::string()>& fn,
                        const std::string& crash_diagnosis);
    // A generator for this exercise's random shapes and values (from the printed seed).
    Rng rng(uint64_t stream) const { return Rng(seed_ * 1000003 + stream); }
    int64_t random_size(Rng& rng, int64_t lo, int64_t hi) const;

  private:
    void send(const std::string& line);
    int fd_;
    uint64_t seed_;

  public:
    const ExerciseTable& t;  // the learner's functions
};

struct Exercise {
    int number;
    std::string name;     // "07_gru_cell_fused": the file name without .cpp
    std::string title;    // what it teaches, one line
    std::string minutes;  // how long it takes, e.g. "20-40"
    std::string hint;     // where the library's answer is
    std::function<void(Grader&)> grade;
};
const std::vector<Exercise>& all_exercises();
void add_op_exercises(std::vector<Exercise>& out);           // 01-05 (checks_ops.cpp)
void add_layer_exercises(std::vector<Exercise>& out);        // 06-11 (checks_layers.cpp)
void add_optimizer_exercise(std::vector<Exercise>& out);     // 12 (checks_optim.cpp)
void add_decoding_exercises(std::vector<Exercise>& out);     // 13-14 (checks_decoding.cpp)
void add_bleu_exercise(std::vector<Exercise>& out);          // 15 (checks_bleu.cpp)
void add_transformer_exercises(std::vector<Exercise>& out);  // 16-17 (checks_transformer.cpp)

// ---- comparing numbers (compare.cpp) ----------------------------------------------------------

// What a comparison knows besides the two arrays, to name a pattern when one fits.
struct CompareContext {
    std::vector<int64_t> shape;  // of both arrays (for the index of the first difference)
    double atol = 1e-9, rtol = 1e-7;
    std::vector<uint8_t> masked;  // optional: 1 = a masked position (should be 0 exactly)
    std::string nan_hint;         // said when `got` holds NaN/inf where expected is finite
    // Known wrong answers: when `got` equals one of these, its label is the diagnosis.
    std::vector<std::pair<std::string, std::vector<double>>> alternatives;
};

// "" when every element agrees within atol + rtol·|expected| (equal infinities agree); else
// "<what>: first difference at [i,j] (flat k): got g, expected e" plus the pattern if one fits:
// a known alternative, NaN, sign flipped, off by a factor, transposed, masked positions.
std::string compare(const std::string& what, const std::vector<double>& got,
                    const std::vector<double>& expected, const CompareContext& context);
std::vector<double> values(const Tensor& t);    // data as double
std::vector<double> gradient(const Tensor& t);  // .grad as double (zeros when none)
std::vector<int64_t> dims(const Tensor& t);
std::string format_index(const std::vector<int64_t>& shape, int64_t flat);

// ---- gradient checks shared by the tensor exercises (compare.cpp) -----------------------------

using TensorFn = std::function<Tensor(const std::vector<Tensor>&)>;
struct GradCase {
    GradCase(std::string label_, std::vector<Tensor> inputs_, std::vector<std::string> names_,
             TensorFn learner_, TensorFn reference_)
        : label(std::move(label_)),
          inputs(std::move(inputs_)),
          names(std::move(names_)),
          learner(std::move(learner_)),
          reference(std::move(reference_)) {}
    std::string label;               // "tanh [7,13]"
    std::vector<Tensor> inputs;      // leaves; those requiring grad are checked
    std::vector<std::string> names;  // one per input, for the messages
    TensorFn learner, reference;
    std::string output = "value";    // the result's name in messages, e.g. "o [B,h,T,dv]"
    CompareContext forward_context;  // shape and alternatives for the forward
    // Per input: alternatives and masks for its gradient (optional; shape filled in).
    std::vector<CompareContext> grad_contexts;
    bool finite_differences = true;  // false for inputs holding -inf
};
// Adds the checks "<label>: forward", "<label>: backward vs seqgrad", then the backward again
// in the two situations a real graph brings: "<label>: backward adds to a gradient already
// there" (the inputs' gradients pre-filled, as when an input feeds several ops: `=` instead of
// `+=` shows) and "<label>: backward with an input that needs no gradient" (each input in turn,
// in a child process: parent_grad returns nullptr for it), and last "<label>: backward vs central
// differences".
void check_gradients(Grader& g, const GradCase& c);
// The diagnoses of those two checks.
extern const char* const kOverwrittenGradient;
extern const char* const kNullParentGrad;
// The upstream gradient "backward vs seqgrad" sends into both outputs: uniform(−1, 1) from a
// fixed seed, never all ones (which hides a transposed gradient). A check that predicts the
// gradients of a known slip uses the same.
Tensor upstream_gradient(const Shape& shape);
// Random uniform(lo, hi) leaf of `shape`.
Tensor random_leaf(Rng& rng, const Shape& shape, double lo = -1, double hi = 1,
                   bool requires_grad = true);

}  // namespace seqgrad::grading
