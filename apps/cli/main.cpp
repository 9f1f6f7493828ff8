// seqgrad: train, decode, evaluate and study attention-based seq2seq translation models.
#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <functional>
#include <map>

#include "apps/cli/commands.h"
#include "seqgrad/autograd/kernels/switches.h"

namespace {

const char* kUsage = R"(usage: seqgrad COMMAND [ARGS]

commands:
  train CONFIG [--set key.path=value ...] [--quiet]   train a model from a JSON config
  train --resume RUN_DIR [--set ...]                  continue a stopped run
  translate RUN_DIR [--input FILE] [--beam K] [--alpha A] [--nbest N]
            [--prefix TEXT] [--trace FILE.jsonl]      translate lines from stdin
  eval RUN_DIR [--test FILE.tsv] [--beam K] [--out FILE]
                                                      BLEU / accuracy on a test set
  attention RUN_DIR "a sentence" [--out heat.svg]     attention heatmap and diagnosis
  saliency RUN_DIR "a sentence" [--method M] [--csv FILE]
                                                      gradients of each output token with
                                                      respect to the source, beside attention
  explore RUN_DIR [--test FILE.tsv] [--limit N] [--out FILE.html]
                                                      one offline HTML file: corpus, beam
                                                      trees, attention, what-if, training
  average RUN_DIR --last N [--out NAME]               average the last N kept checkpoints
  bleu REF [REF2 ...] < HYPS                          sacreBLEU-compatible BLEU
  bpe learn --merges N < corpus > codes               BPE subwords as subword-nmt learns them
  bpe apply CODES [--vocabulary FILE] < text          ... and applies them (also: vocab, undo,
                                                      tokenize, detokenize)
  gradcheck [--only NAME] [--eps E] [--atol A] [--rtol R]
                                                      double-precision gradient checks
  gradflow [--out DIR] [--lengths 5,10,...]           gradient flow with/without attention
  exercises list | check [N ...] | hint N | train-dates
                                                      practise: write the pieces, get graded
  plot FILE.csv --x COL --y COL[,COL...] --out FILE.svg [--group COL] [--logx] [--logy]
                                                      a line plot (SVG) of a CSV table

run `seqgrad COMMAND --help` for a command's options.
)";

}  // namespace

int main(int argc, char** argv) {
    using namespace seqgrad;
    // SEQGRAD_DISABLE, read at the first call (autograd/kernels/switches.h); an unknown name is
    // reported below, as any command's error.
    const Switches* disabled = nullptr;
    // One line per sub-command.
    std::map<std::string, std::function<int(const Argv&)>> commands{
        {"train", [&](const Argv& args) { return cmd_train(args, *disabled); }},
        {"gradcheck", cmd_gradcheck},
        {"gradflow", cmd_gradflow},
        {"translate", cmd_translate},
        {"eval", cmd_eval},
        {"attention", cmd_attention},
        {"saliency", cmd_saliency},
        {"bleu", cmd_bleu},
        {"explore", cmd_explore},
        {"bpe", cmd_bpe},
        {"average", cmd_average},
        {"plot", cmd_plot},
        {"exercises", cmd_exercises},
    };
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
        fmt::print("{}", kUsage);
        return argc < 2 ? 2 : 0;
    }
    auto it = commands.find(argv[1]);
    if (it == commands.end()) {
        fmt::print(stderr, "seqgrad: unknown command '{}'\n\n{}", argv[1], kUsage);
        return 2;
    }
    try {
        // SEQGRAD_DISABLE is read here, once, for every command: the kernels' switches (buffer
        // pool, packed products, ...) take effect before the first tensor exists, and the
        // commands that build a model to train are handed the layers' (fused cells, attention).
        disabled = &switches();
        return it->second(Argv(argv + 2, argv + argc));
    } catch (const std::exception& e) {
        fmt::print(stderr, "seqgrad {}: error: {}\n", argv[1], e.what());
        return 1;
    }
}
