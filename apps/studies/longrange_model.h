// The small models that learn the long-range tasks of apps/studies/longrange_tasks.h, the gradient
// they send back to each step, and training one to a loss threshold. Part of `seqgrad
// gradflow`, not of the library: a recurrent layer and a head, nothing more.
//
// The model (one recurrent layer of any cell, unidirectional, over the whole input):
//   h_1 .. h_N = Recurrent(x_1 .. x_N)                     (N = batch.steps)
//   outputs    = gather(h_1 .. h_N)  [B, N, H]             the node attention reads
//   at each answer step a (one for adding, the last 10 for copy_memory):
//     none:       features_a = h_a
//     attention:  c_a = attend(query = h_a, keys = outputs[:, 0:memory])
//                 features_a = [h_a; c_a]
//     prediction_a = head(features_a)                      (Linear: 1 value, or 8 logits)
//   loss = mean squared error (adding) or mean cross-entropy over the 10 answers (copy_memory).
// The head reads h_a from the step state itself, not from `outputs`, so the gradient that
// arrives at `outputs` is exactly the part that came through attention (the context vectors):
// with attention "none" it is 0.
//
// attention "transformer" (the cell is ignored): a small causal Transformer instead of the
// recurrent layer,
//   e_t     = W_in x_t + b_in + P_t    [B, N, H]    (P sinusoidal; `outputs` and `inputs` as above)
//   z       = layers(e), each post-norm with the causal mask (step t sees steps 0..t):
//             y = norm1(z + SelfAttention(z)),  z' = norm2(y + FF(y)),  FF: H -> 2H -> H (ReLU)
//   prediction_a = head(z_a)
// Parameters "input.*", "layers.K.*" (nn.TransformerEncoderLayer's names), "out.*". Every step's
// gradient reaches it through self-attention (from its own and every later step) and, for an
// answer step, through its residual path; there is no recurrence.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "apps/studies/gradflow.h"
#include "apps/studies/longrange_tasks.h"
#include "seqgrad/layers/attention.h"
#include "seqgrad/layers/linear.h"
#include "seqgrad/layers/recurrent.h"
#include "seqgrad/layers/transformer.h"

namespace seqgrad {

class LongRangeModel : public Module {
  public:
    // task: adding | copy_memory (fixes the input channels and the head's outputs);
    // cell: rnn | gru | lstm; attention: none | bahdanau | luong_dot | luong_general |
    // luong_concat (attention size = hidden). Parameters "encoder.*" (PyTorch names of the
    // recurrent layer), "attention.*", "out.weight", "out.bias".
    // heads, layers: of "transformer" only (heads must divide hidden_size)
    LongRangeModel(const std::string& task, const std::string& cell, const std::string& attention,
                   int64_t hidden_size, Rng& rng, int64_t heads = 4, int layers = 2);

    struct Output {
        Tensor loss;                      // []
        Tensor inputs;                    // [B, N, C] (requires grad when asked)
        Tensor outputs;                   // [B, N, H]: what attention reads (transformer: e)
        std::vector<Tensor> step_states;  // h_t, each [B, H] (transformer: none)
    };
    // inputs_grad: make the inputs a leaf that receives a gradient (for ‖dL/dx_t‖).
    Output forward(const LongRangeBatch& batch, bool inputs_grad = false) const;

    const std::string& task() const { return task_; }
    const std::string& cell() const { return cell_; }
    const std::string& attention_kind() const { return attention_kind_; }
    int64_t hidden_size() const { return hidden_size_; }
    int64_t num_parameters() const;

    bool is_transformer() const { return !layers.empty(); }

    std::unique_ptr<Recurrent> encoder;    // null for "transformer"
    std::unique_ptr<Attention> attention;  // null for "none" and "transformer"
    std::unique_ptr<Linear> input;         // "transformer" only
    std::vector<std::unique_ptr<TransformerEncoderLayer>> layers;  // "transformer" only
    std::unique_ptr<Linear> out;

  private:
    // o.loss from the predictions at the answer steps (one [B, outputs] each); returns o
    Output& with_loss(const LongRangeBatch& batch, const std::vector<Tensor>& predictions,
                      Output& o) const;

    std::string task_, cell_, attention_kind_;
    int64_t hidden_size_;
};

// The hidden size for `cell` whose model has the parameter count closest to `budget` (same task
// and attention): equal parameter budgets across cells.
// (transformer: a multiple of heads, with that many heads and layers)
int64_t matched_hidden_size(const std::string& task, const std::string& cell,
                            const std::string& attention, int64_t budget, int64_t heads = 4,
                            int layers = 2);

// Gradient reaching each step t = 1..N of one batch, mean over the rows, as a FlowMeasurement
// (apps/studies/gradflow.h) of all B rows at every step:
//   hidden     ‖dL/dh_t‖                      the step state's whole gradient
//   direct     ‖dL/d outputs[:, t]‖            the part through attention (context vectors)
//   recurrent  ‖dL/dh_t − dL/d outputs[:, t]‖  the rest: through h_{t+1} (and the head's read
//                                               of h_t at answer steps)
//   embedding  ‖dL/dx_t‖                      the input at step t
// transformer: hidden is ‖dL/de_t‖ (e_t: the step's representation entering the first layer);
// direct and recurrent are NaN (there is no recurrence to split by). No group norms and no
// attention diagnostics.
// The model's parameter gradients are zeroed first and hold this batch's gradients afterwards.
FlowMeasurement measure_long_range_flow(LongRangeModel& model, const LongRangeBatch& batch);

// Adam with gradient clipping on fresh batches of the task at length T, until the mean loss
// over the last `window` steps falls below `threshold` or `max_steps` steps have run.
struct LongRangeTraining {
    int reached_at = -1;  // the first step whose window mean is below the threshold; -1: never
    int steps_run = 0;
    double final_loss = 0;       // the window mean at the last step run
    std::vector<double> losses;  // every step's loss
};
struct LongRangeTrainOptions {
    int length = 50, batch_size = 32, max_steps = 1000, window = 20;
    double threshold = 0.01, lr = 2e-3, clip_norm = 1;
    uint64_t data_seed = 1;
};
// on_step(step, loss), if given, runs after each backward, before clipping (the gradients are
// this step's).
LongRangeTraining train_long_range(
    LongRangeModel& model, const LongRangeTrainOptions& options,
    const std::function<void(int step, double loss)>& on_step = nullptr);

}  // namespace seqgrad
