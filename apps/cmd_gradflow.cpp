// `seqgrad gradflow`: how much gradient reaches each encoder step, with and without attention
// (apps/gradflow.h).
#include <fmt/format.h>

#include <chrono>
#include <sstream>

#include "apps/args.h"
#include "apps/commands.h"
#include "apps/gradflow.h"
#include "seqgrad/autograd/gemm.h"

namespace seqgrad {
namespace {

const char* kHelp =
    R"(usage: seqgrad gradflow [--out DIR] [--models none,bahdanau,...] [--lengths 5,10,...]
                        [--task copy|reverse|dates|text] [--seeds N] [--train-steps N] ...
       seqgrad gradflow --run RUN_DIR [--run RUN_DIR2 ...] [--task dates|text|copy|reverse] ...

For each model and each source length L, builds a batch of sources of exactly L tokens whose
target depends on their FIRST tokens, runs the model's training forward pass and backward,
and measures, averaged over the batch (and the seeds), the norm of the gradient reaching the
encoder state h_t and the source embedding e_t at every position t = 1..L. Also reports
per-parameter-group gradient norms, the share of saturated tanh units (|x| > 3) in the
attention MLP and the attention entropy.

model (fresh models, one per attention kind):
  --models LIST          attention kinds (default none,bahdanau,luong_dot,luong_general;
                         also luong_concat)
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
                         text: the same with a TSV run's validation sentences
  --target-length K      K for copy/reverse (default 5; 0 = the whole source)
  --symbols N            distinct source symbols for copy/reverse (default 20)
  --lengths LIST         source lengths (default 5,10,20,30,40,50,60)
  --batch B              sentences per batch (default 32)
training (compare fresh and briefly trained models):
  --train-steps N        Adam steps on the task (random L from --lengths each step) before a
                         second measurement (default 0: fresh only); per-group gradient
                         norms of every step go to training.csv
  --measure-at LIST      also measure after these steps, e.g. 100,300 (stages step100, ...)
  --lr LR --clip C       Adam learning rate (default 2e-3), gradient clipping (default 1)
output:
  --out DIR              default gradflow/: gradflow.csv (every number), summary.csv,
                         for each STAGE (fresh, run, trained): grad_vs_position_STAGE.svg and
                         grad_vs_position_relative_STAGE.svg (at the largest L),
                         grad_first_step_vs_length_STAGE.svg; with training: training.csv,
                         training_encoder_grad_norm.svg, training_loss.svg
  --threads N            BLAS threads (default 1)
  --quiet                no progress
)";

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty()) items.push_back(item);
    return items;
}

// A comma-separated list of positive integers, e.g. "5,10,20".
std::vector<int> parse_lengths(const std::string& text, const char* option = "--lengths") {
    std::vector<int> lengths;
    for (const std::string& item : split_list(text)) {
        size_t used = 0;
        int value = 0;
        try {
            value = std::stoi(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != item.size() || value < 1)
            throw Error(fmt::format("{}: expected positive integers like 5,10,20, got \"{}\"",
                                    option, item));
        lengths.push_back(value);
    }
    if (lengths.empty()) throw Error(fmt::format("{}: empty list", option));
    return lengths;
}

}  // namespace

int cmd_gradflow(const Argv& argv) {
    Args args(argv,
              {"out", "models", "lengths", "task", "target-length", "symbols", "batch", "seeds",
               "seed", "train-steps", "lr", "clip", "embedding", "hidden", "attention-size", "run",
               "threads", "measure-at"},
              {"quiet", "help"});
    if (args.has("help")) {
        fmt::print("{}", kHelp);
        return 0;
    }
    if (!args.positional().empty()) {
        fmt::print(stderr, "{}", kHelp);
        return 2;
    }
    GradflowOptions o;
    o.out_dir = args.get("out", o.out_dir);
    o.run_dirs = args.all("run");
    if (args.has("models")) o.models = split_list(args.get("models"));
    for (const std::string& m : o.models)
        if (m != "none" && m != "bahdanau" && m != "luong_dot" && m != "luong_general" &&
            m != "luong_concat")
            throw Error(fmt::format(
                "--models: unknown attention kind \"{}\" (expected none, bahdanau, luong_dot, "
                "luong_general, luong_concat)",
                m));
    if (args.has("lengths")) o.lengths = parse_lengths(args.get("lengths"));
    o.task = args.get("task", o.run_dirs.empty() ? "copy" : "");
    o.target_length = args.get_int("target-length", o.target_length);
    o.symbols = args.get_int("symbols", o.symbols);
    o.batch_size = args.get_int("batch", o.batch_size);
    o.seeds = args.get_int("seeds", o.seeds);
    o.seed = uint64_t(args.get_int("seed", int(o.seed)));
    o.train_steps = args.get_int("train-steps", o.train_steps);
    if (args.has("measure-at")) {
        o.measure_at = parse_lengths(args.get("measure-at"), "--measure-at");
        for (int step : o.measure_at)
            if (step >= o.train_steps)
                throw Error(fmt::format("--measure-at {}: must be less than --train-steps ({})",
                                        step, o.train_steps));
    }
    o.lr = args.get_double("lr", o.lr);
    o.clip_norm = args.get_double("clip", o.clip_norm);
    o.model.embedding_size = args.get_int("embedding", o.model.embedding_size);
    o.model.hidden_size = args.get_int("hidden", o.model.hidden_size);
    o.model.attention_size = args.get_int("attention-size", o.model.attention_size);
    o.quiet = args.has("quiet");
    set_blas_threads(std::max(1, args.get_int("threads", 1)));
    if (o.model.embedding_size < 1 || o.model.hidden_size < 1 || o.model.attention_size < 1)
        throw Error("--embedding, --hidden and --attention-size must be >= 1");
    if (o.task.empty()) {
        // a run studies its own kind of data unless told otherwise
        Config config = Config::load(o.run_dirs.front() + "/config.json");
        o.task = config.data.task == "dates" ? "dates" : "text";
    }

    auto start = std::chrono::steady_clock::now();
    GradflowReport report = run_gradflow(o);
    std::vector<std::string> written = write_gradflow_outputs(report, o);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{}", gradflow_summary_table(report));
    fmt::print(
        "\n|dL/dh_t|: norm of the gradient reaching encoder state t, mean over the {} sentences "
        "of a batch and over {} {}; h_1/h_L: its value at the first step over its value at the "
        "last; |dL/de_1|: the same at the first source embedding; tanh>3: share of saturated "
        "units in the attention MLP; H/lnL: attention entropy relative to uniform weights.\n",
        o.batch_size, o.seeds, o.run_dirs.empty() ? "model seeds" : "batches");
    fmt::print("{:.1f}s; wrote", seconds);
    for (const std::string& path : written) fmt::print(" {}", path);
    fmt::print("\n");
    return 0;
}

}  // namespace seqgrad
