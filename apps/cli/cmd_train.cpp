// `seqgrad train CONFIG` and `seqgrad train --resume RUN_DIR`.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <fstream>
#include <thread>

#include "apps/cli/args.h"
#include "apps/cli/commands.h"
#include "apps/cli/model_switches.h"
#include "apps/plot/plot.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/file_io.h"
#include "seqgrad/models/training/trainer.h"

namespace seqgrad {
namespace {

const char* kHelp = R"(usage: seqgrad train CONFIG [--set key.path=value ...] [--quiet]
       seqgrad train --resume RUN_DIR [--set key.path=value ...] [--quiet]

Trains a model as CONFIG says and writes into its output.run_dir: config.json (the config
actually used), vocab.source.json, vocab.target.json, for data.tokenizer "bpe" the merges
learned from the training split (bpe.codes, or bpe.source.codes and bpe.target.codes, in
subword-nmt's format), metrics.jsonl, best.safetensors, last.safetensors, loss.svg and
explore.html (`seqgrad explore` of the first output.explore test sentences; 0 turns it off).
Ctrl-C finishes the current step, writes `last` and exits; a second Ctrl-C exits at once (after
the file write in progress, if any). Only one `train` may write a run directory at a time
(RUN_DIR/train.lock); a second is refused.
--resume continues from RUN_DIR/last.safetensors with RUN_DIR/config.json (plus --set).

A bad line in a TSV corpus (a tab inside a sentence, an empty side, invalid UTF-8) stops the
run with an error naming the file and line, unless data.bad_lines (as pandas' on_bad_lines) says
otherwise: "error" (the default), "warn" (leave it out and print it) or "skip" (leave it out and
print how many). Every line left out is listed in RUN_DIR/skipped_lines.tsv; lines left out of
the valid or test split are reported apart, as the scores leave them out. A checkpoint holding
NaN or Inf is never written nor read.

Started by mpirun (mpirun -np N seqgrad train CONFIG, in a build with -DSEQGRAD_MPI=ON), the N
processes train one model together: each runs its share of every batch, rank 0 writes the run
directory. Resuming with another N continues the same run.
)";

extern "C" void on_sigint(int) {
    request_stop();  // the first: stop after this step; a second: exit after the current write
}

// An error on some ranks must stop every rank, or the others wait for it in the next gradient
// sum. An error every rank meets (bad data, a diverged loss) should be printed once: rank 0
// prints and aborts at once, and mpirun stops the others; another rank waits two seconds (it is
// stopped before then if rank 0 met the error too), then prints with its rank and aborts.
[[noreturn]] void stop_every_rank(Communicator& comm, const std::exception& e) {
    if (!comm.is_root()) std::this_thread::sleep_for(std::chrono::seconds(2));
    const std::string who =
        comm.is_root() ? std::string() : fmt::format(" (rank {} of {})", comm.rank(), comm.size());
    fmt::print(stderr, "seqgrad train{}: error: {}\n", who, e.what());
    comm.abort(1);
    std::exit(1);  // not reached: abort does not return
}

}  // namespace

void write_loss_plot(const std::string& run_dir) {
    std::ifstream in(run_dir + "/metrics.jsonl");
    plot::Series train{"train loss", {}, {}}, valid{"validation loss", {}, {}};
    std::string line;
    while (std::getline(in, line)) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.contains("type")) continue;
        plot::Series& s = j["type"] == "train" ? train : valid;
        s.x.push_back(j.value("step", 0.0));
        s.y.push_back(j.value("loss", 0.0));
    }
    plot::LinePlot p;
    p.title = "loss (cross-entropy per target token)";
    p.x_label = "step";
    p.y_label = "loss";
    p.log_y = true;
    p.series = {train, valid};
    write_file_atomically(run_dir + "/loss.svg", plot::line_plot_svg(p));
}

std::string train_summary_line(const TrainSummary& s) {
    std::string line =
        fmt::format("{} steps, {} epochs in {:.1f}s", s.steps, s.epochs_completed, s.seconds);
    if (std::isfinite(s.best_valid_loss))
        line += fmt::format("; best validation loss {:.4f} (ppl {:.2f})", s.best_valid_loss,
                            std::exp(s.best_valid_loss));
    else
        line += "; no validation ran";
    if (s.validations > 0)
        line += fmt::format("; last validation {} {:.2f}", s.metric_name, s.last_valid_metric);
    if (s.has_test) line += fmt::format("; test {} {:.2f}", s.metric_name, s.test_metric);
    if (s.interrupted) line += " (interrupted: last.safetensors written)";
    if (s.stopped_early) line += " (early stop)";
    return line;
}

// After training: RUN_DIR/explore.html for the first output.explore test sentences (0 = off).
// A failure here does not fail the run (the model is saved); it says what to run instead.
static void write_run_explore(const Config& config) {
    if (config.output.explore <= 0) return;
    ExploreRequest request;
    request.run_dir = config.output.run_dir;
    request.limit = config.output.explore;
    request.progress = false;
    try {
        const ExploreReport r = run_explore(request);
        fmt::print(
            "open {} in a browser: the test sentences, their beam-search trees, attention "
            "and the training curves ({:.1f} MB, {} sentences; output.explore sets how "
            "many, 0 turns it off)\n",
            r.path, double(r.bytes) / (1024 * 1024), r.sentences);
    } catch (const std::exception& e) {
        fmt::print(stderr,
                   "explore.html not written: {}\n(run `seqgrad explore {} --test FILE.tsv`)\n",
                   e.what(), config.output.run_dir);
    }
}

int cmd_train(const Argv& argv, const Switches& switches) {
    Args args(argv, {"set", "resume"}, {"quiet", "help"});
    if (args.has("help")) {
        fmt::print("{}", kHelp);
        return 0;
    }
    // Under mpirun every rank loads the config; its errors are the same on all ranks, so rank
    // 0 alone reports them.
    std::unique_ptr<Communicator> comm = launched_by_mpi() ? mpi_communicator() : nullptr;
    Config config;
    TrainOptions options;
    options.quiet = args.has("quiet");
    options.communicator = comm.get();
    try {
        if (args.has("resume")) {
            if (!args.positional().empty())
                throw Error(
                    "train --resume RUN_DIR takes no CONFIG (the run's config.json is used)");
            std::string run_dir = args.get("resume");
            config = Config::load(run_dir + "/config.json", args.all("set"));
            config.output.run_dir = run_dir;
            options.resume = true;
        } else {
            if (args.positional().size() != 1) {
                fmt::print(stderr, "{}", kHelp);
                return 2;
            }
            config = Config::load(args.positional()[0], args.all("set"));
        }
    } catch (const std::exception& e) {
        if (!comm || comm->size() == 1) throw;
        if (comm->is_root()) fmt::print(stderr, "seqgrad train: error: {}\n", e.what());
        return 1;
    }
    options.fused = fused_layers(config.model.cell, switches);  // SEQGRAD_DISABLE=fused_gru, ...
    options.on_validation = write_loss_plot;
    std::signal(SIGINT, on_sigint);
    std::signal(SIGTERM, on_sigint);  // mpirun turns Ctrl-C into SIGTERM for its processes
    TrainSummary s;
    try {
        s = train(config, options);
    } catch (const std::exception& e) {
        if (!comm || comm->size() == 1) throw;
        stop_every_rank(*comm, e);
    }
    if (comm && !comm->is_root()) return s.interrupted ? 130 : 0;
    write_loss_plot(config.output.run_dir);
    fmt::print("{}\n", train_summary_line(s));
    fmt::print("run directory: {}\n", config.output.run_dir);
    if (!s.interrupted) write_run_explore(config);
    return s.interrupted ? 130 : 0;
}

}  // namespace seqgrad
