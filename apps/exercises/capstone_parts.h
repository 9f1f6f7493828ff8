// The capstone's parts: the learner's GRU cell, Bahdanau attention (with their masked softmax),
// cross-entropy and Adam behind the library's own interfaces (RecurrentCell, Attention,
// Optimizer), each falling back to the library's part when its exercise is not done.
#pragma once

#include <string>
#include <vector>

#include "apps/exercises/table.h"
#include "seqgrad/layers/attention.h"
#include "seqgrad/layers/recurrent.h"
#include "seqgrad/optim/optimizer.h"

namespace seqgrad::grading {

// Which exercises the capstone uses are done (a probe call that does not throw NotImplemented).
struct LearnerParts {
    bool gru_fused = false;        // 07
    bool gru_composed = false;     // 06
    bool masked_softmax = false;   // 09
    bool attention = false;        // 10
    bool cross_entropy = false;    // 05
    bool adam = false;             // 12 (adam_update and clip_grad_norm)
    std::string describe() const;  // one line per part: whose it is
};
LearnerParts probe_parts(const ExerciseTable& t);

// A GRU cell whose step is the learner's (07: gates from two linears, then the fused cell; or
// 06: the composed cell), or the library's.
class LearnerGRUCell : public RecurrentCell {
  public:
    LearnerGRUCell(int64_t input_size, int64_t hidden_size, Rng& rng, const ExerciseTable& t,
                   const LearnerParts& parts)
        : RecurrentCell(CellType::gru, input_size, hidden_size, rng), t_(t), parts_(parts) {}
    RecurrentState step(const Tensor& x, const RecurrentState& state,
                        const Tensor& step_mask = Tensor()) const override;

  private:
    const ExerciseTable& t_;
    LearnerParts parts_;
};

// Bahdanau attention whose scores and context are the learner's (10) and whose weights come
// from the learner's masked softmax (09).
class LearnerBahdanau : public BahdanauAttention {
  public:
    LearnerBahdanau(int64_t query_dim, int64_t key_dim, int64_t attn_dim, Rng& rng,
                    const ExerciseTable& t, const LearnerParts& parts)
        : BahdanauAttention(query_dim, key_dim, attn_dim, rng), t_(t), parts_(parts) {}
    using Attention::forward;
    AttentionResult forward(const Tensor& query, const Tensor& keys, const Tensor& keys_projected,
                            const Tensor& mask,
                            const Tensor& output_steps = Tensor(),
                            const Tensor& coverage = Tensor()) const override;

  private:
    const ExerciseTable& t_;
    LearnerParts parts_;
};

// Adam whose update loop is the learner's adam_update (12), one parameter at a time.
class LearnerAdam : public Optimizer {
  public:
    LearnerAdam(NamedTensors params, double lr, const ExerciseTable& t);
    const char* kind() const override { return "adam"; }

  protected:
    nlohmann::json hyperparameters() const override;
    void update(real grad_scale, bool zero_grads) override;

  private:
    const ExerciseTable& t_;
    size_t exp_avg_, exp_avg_sq_;
};

}  // namespace seqgrad::grading
