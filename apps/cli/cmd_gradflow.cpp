// `seqgrad gradflow`: how much gradient reaches each encoder step, with and without attention
// (apps/studies/gradflow.h).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "apps/cli/commands.h"
#include "apps/cli/gradflow_options.h"
#include "apps/studies/gradflow.h"
#include "apps/studies/gradflow_longrange.h"
#include "apps/studies/longrange_tasks.h"
#include "seqgrad/autograd/kernels/gemm.h"

namespace seqgrad {
namespace {

const char* kHelp =
    R"(usage: seqgrad gradflow [--out DIR] [--cells gru,...] [--attention none,bahdanau,...]
                        [--lengths 5,10,...] [--task copy|reverse|dates|text|adding|copy_memory]
                        [--seeds N] [--train-steps N] ...
       seqgrad gradflow --run RUN_DIR [--run RUN_DIR2 ...] [--task dates|text|copy|reverse] ...

For each model and each source length L, builds a batch of sources of exactly L tokens whose
target depends on their FIRST tokens, runs the model's training forward pass and backward,
and measures, averaged over the batch (and the seeds), the norm of the gradient reaching the
encoder state h_t and the source embedding e_t at every position t = 1..L, and splits the
first into the part that came directly through attention and the part that came through the
recurrence. Also reports per-parameter-group gradient norms, the share of saturated tanh units
(|x| > 3) in the attention MLP and the attention entropy.

model (fresh models, one per cell × attention kind):
  --cells LIST           recurrent cells: rnn, gru, lstm (default gru)
  --attention LIST       attention kinds (default none,bahdanau,luong_dot,luong_general;
                         also luong_concat, and transformer: a Transformer encoder-decoder
                         whose h_t is the encoder's output (the memory) and e_t its input;
                         no recurrence, so no direct/recurrent split); --models is its
                         older name
  --heads N --ff-size F --layers K   the transformer's heads (default 4), feed-forward size
                         (128) and layers per stack (2); its d_model is --hidden
  --embedding E --hidden H --attention-size A     sizes (default 32, 64, 64)
  --seeds N              model initialisations averaged (default 3)
  --seed S               first seed (default 1)
  --run RUN_DIR          study a trained run instead (its `best` checkpoint); repeat to
                         compare several runs; --seeds then averages over N data batches
data:
  --task T               copy (default): target = the first K source tokens;
                         reverse: the first K source tokens reversed;
                         dates: generated dates joined and cut to L - 1 characters + <eos>,
                         target = the ISO form of the first one (default with a dates run);
                         text: the same with a TSV run's validation sentences;
                         adding, copy_memory: the long-range benchmarks (apps/studies/longrange_tasks.h)
                         with small sequence models, --lengths are T (default 50,100,200);
                         transformer there: a causal Transformer of --layers layers and
                         --heads heads at the same parameter budget (FF 2 x its size)
  --target-length K      K for copy/reverse (default 5; 0 = the whole source)
  --symbols N            distinct source symbols for copy/reverse (default 20)
  --lengths LIST         source lengths (default 5,10,20,30,40,50,60)
  --batch B              sentences per batch (default 32)
training (compare fresh and briefly trained models):
  --train-steps N        Adam steps on the task (random L from --lengths each step) before a
                         second measurement (default 0: fresh only); per-group gradient
                         norms of every step go to training.csv. adding/copy_memory: the step
                         budget of each model, trained on its own T until the loss threshold
  --measure-at LIST      also measure after these steps, e.g. 100,300 (stages step100, ...)
  --lr LR --clip C       Adam learning rate (default 2e-3), gradient clipping (default 1)
  --threshold X          adding/copy_memory: the loss to reach (default: a tenth of the
                         memoryless baseline, 1/60 and ln(8)/10)
  --window W             ... as the mean of the last W steps' losses (default 20)
  --seed-index K         adding/copy_memory: run only the K-th (0-based) of the --seeds seeds,
                         with the numbers it has in the whole study (to spread it over processes)
output:
  --out DIR              default gradflow/: gradflow.csv (every number), summary.csv,
                         for each STAGE (fresh, run, trained): grad_vs_position_STAGE.svg and
                         grad_vs_position_relative_STAGE.svg (at the largest L),
                         grad_split_STAGE.svg (direct vs recurrent, models with attention),
                         grad_first_step_vs_length_STAGE.svg; with training: training.csv,
                         training_encoder_grad_norm.svg, training_loss.svg; adding and
                         copy_memory also threshold_runs.csv and threshold_table.md
  --threads N            BLAS threads (default 1)
  --quiet                no progress
)";

}  // namespace

int cmd_gradflow(const Argv& argv) {
    if (std::find(argv.begin(), argv.end(), "--help") != argv.end()) {
        fmt::print("{}", kHelp);
        return 0;
    }
    GradflowOptions o;
    try {
        o = parse_gradflow_options(argv);
    } catch (const GradflowUsageError&) {
        fmt::print(stderr, "{}", kHelp);
        return 2;
    }
    if (o.task.empty()) {
        // a run studies its own kind of data unless told otherwise
        Config config = Config::load(o.run_dirs.front() + "/config.json");
        o.task = config.data.task == "dates" ? "dates" : "text";
    }

    set_blas_threads(o.threads);
    auto start = std::chrono::steady_clock::now();
    GradflowReport report = run_gradflow(o);
    std::vector<std::string> written = write_gradflow_outputs(report, o);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{}", gradflow_summary_table(report));
    if (!report.threshold_runs.empty())
        fmt::print("\nsteps to the loss threshold:\n{}",
                   threshold_table(report.threshold_runs, o.train_steps));
    if (is_long_range_task(o.task))
        fmt::print(
            "\n|dL/dh_t|: norm of the gradient reaching the recurrent state at step t, mean over "
            "the {} sequences of a batch and over {} model seeds; L is T (the input has T steps "
            "for adding, T + 20 for copy_memory); h_1/h_L: the value at the first step over the "
            "value at the last; |dL/de_1|: the same at the first input x_1.{}\n",
            o.batch_size, o.seeds,
            std::any_of(report.curves.begin(), report.curves.end(),
                        [](const FlowCurve& c) { return c.model == "transformer"; })
                ? " transformer: h_t is the step's representation entering its first layer "
                  "(W_in x_t + P_t); it has no recurrent state and no direct/recurrent split."
                : "");
    else
        fmt::print(
            "\n|dL/dh_t|: norm of the gradient reaching encoder state t, mean over the {} "
            "sentences of a batch and over {} {}; h_1/h_L: its value at the first step over its "
            "value at the last; |dL/de_1|: the same at the first source embedding; tanh>3: share "
            "of saturated units in the attention MLP; H/lnL: attention entropy relative to "
            "uniform weights.{}\n",
            o.batch_size, o.seeds, o.run_dirs.empty() ? "model seeds" : "batches",
            std::any_of(report.curves.begin(), report.curves.end(),
                        [](const FlowCurve& c) { return c.model.rfind("transformer", 0) == 0; })
                ? " transformer: h_t is the encoder's output at t (the memory, read only by "
                  "cross-attention, so all of its gradient arrives through cross-attention) and "
                  "e_t the encoder's input (embedding + position); there is no recurrence, so "
                  "no direct/recurrent split."
                : "");
    fmt::print("{:.1f}s; wrote", seconds);
    for (const std::string& path : written) fmt::print(" {}", path);
    fmt::print("\n");
    return 0;
}

}  // namespace seqgrad
