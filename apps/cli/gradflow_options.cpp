// The command line of `seqgrad gradflow` into GradflowOptions (apps/studies/gradflow.h).
#include "apps/cli/gradflow_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "apps/cli/args.h"
#include "apps/studies/longrange_tasks.h"

namespace seqgrad {

namespace {

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty()) items.push_back(item);
    return items;
}

// A comma-separated list of positive integers, e.g. "5,10,20".
std::vector<int> parse_positive_list(const std::string& text, const char* option) {
    std::vector<int> values;
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
        values.push_back(value);
    }
    if (values.empty()) throw Error(fmt::format("{}: empty list", option));
    return values;
}

// A comma-separated list of names, each one of `allowed`, none twice.
std::vector<std::string> parse_name_list(const std::string& text, const char* option,
                                         const std::vector<std::string>& allowed) {
    std::vector<std::string> names = split_list(text);
    if (names.empty()) throw Error(fmt::format("{}: empty list", option));
    std::string expected;
    for (const std::string& a : allowed) expected += (expected.empty() ? "" : ", ") + a;
    for (size_t i = 0; i < names.size(); ++i) {
        if (std::find(allowed.begin(), allowed.end(), names[i]) == allowed.end())
            throw Error(
                fmt::format("{}: unknown name \"{}\" (expected {})", option, names[i], expected));
        if (std::find(names.begin(), names.begin() + long(i), names[i]) != names.begin() + long(i))
            throw Error(fmt::format("{}: \"{}\" listed twice", option, names[i]));
    }
    return names;
}

// What is compared: the attention kinds (--attention, or its older name --models), the cells,
// the lengths and the task.
void read_comparison(const Args& args, GradflowOptions& o) {
    if (args.has("models") && args.has("attention"))
        throw Error("gradflow: --models is the older name of --attention; give one of them");
    const char* attention_option = args.has("models") ? "--models" : "--attention";
    const std::string attention_list = args.get("attention", args.get("models"));
    if (args.has("attention") || args.has("models"))
        o.models = parse_name_list(
            attention_list, attention_option,
            {"none", "bahdanau", "luong_dot", "luong_general", "luong_concat", "transformer"});
    if (args.has("cells"))
        o.cells = parse_name_list(args.get("cells"), "--cells", {"rnn", "gru", "lstm"});
    if (args.has("lengths")) o.lengths = parse_positive_list(args.get("lengths"), "--lengths");
    o.task = args.get("task", o.run_dirs.empty() ? "copy" : "");
    if (is_long_range_task(o.task) && !args.has("lengths")) o.lengths = {50, 100, 200};
}

// The data, the training and when and how the gradient is measured.
void read_training(const Args& args, GradflowOptions& o) {
    o.target_length = args.get_int("target-length", o.target_length);
    o.symbols = args.get_int("symbols", o.symbols);
    o.batch_size = args.get_int("batch", o.batch_size);
    o.seeds = args.get_int("seeds", o.seeds);
    o.seed = uint64_t(args.get_int("seed", int(o.seed)));
    o.train_steps = args.get_int("train-steps", o.train_steps);
    if (args.has("measure-at")) {
        o.measure_at = parse_positive_list(args.get("measure-at"), "--measure-at");
        for (int step : o.measure_at)
            if (step >= o.train_steps)
                throw Error(fmt::format("--measure-at {}: must be less than --train-steps ({})",
                                        step, o.train_steps));
    }
    o.lr = args.get_double("lr", o.lr);
    o.clip_norm = args.get_double("clip", o.clip_norm);
    o.seed_index = args.get_int("seed-index", o.seed_index);
    if (args.has("seed-index") &&
        (!is_long_range_task(o.task) || o.seed_index < 0 || o.seed_index >= o.seeds))
        throw Error(fmt::format(
            "gradflow: --seed-index {}: expected 0..{} (--seeds {}), with --task adding or "
            "copy_memory",
            o.seed_index, o.seeds - 1, o.seeds));
    o.threshold = args.get_double("threshold", o.threshold);
    o.window = args.get_int("window", o.window);
    if (o.threshold < 0 || o.window < 1)
        throw Error(fmt::format("gradflow: --threshold {} must be > 0 and --window {} >= 1",
                                o.threshold, o.window));
}

// The models' sizes: the RNNs', and the Transformer's when it is compared.
void read_sizes(const Args& args, GradflowOptions& o) {
    o.model.embedding_size = args.get_int("embedding", o.model.embedding_size);
    o.model.hidden_size = args.get_int("hidden", o.model.hidden_size);
    o.model.attention_size = args.get_int("attention-size", o.model.attention_size);
    o.heads = args.get_int("heads", o.heads);
    o.ff_size = args.get_int("ff-size", o.ff_size);
    o.transformer_layers = args.get_int("layers", o.transformer_layers);
    const bool transformer =
        std::find(o.models.begin(), o.models.end(), "transformer") != o.models.end();
    // on the long-range tasks the transformer's size is matched to the budget (a multiple of
    // --heads); otherwise --hidden is its d_model
    const bool divides =
        o.heads >= 1 && (is_long_range_task(o.task) || o.model.hidden_size % o.heads == 0);
    if (transformer && (o.heads < 1 || o.ff_size < 1 || o.transformer_layers < 1 || !divides))
        throw Error(fmt::format(
            "gradflow: the Transformer's --heads {} must divide --hidden {} (its d_model), and "
            "--heads, --ff-size {} and --layers {} must be >= 1",
            o.heads, o.model.hidden_size, o.ff_size, o.transformer_layers));
    if (o.model.embedding_size < 1 || o.model.hidden_size < 1 || o.model.attention_size < 1)
        throw Error("--embedding, --hidden and --attention-size must be >= 1");
}

}  // namespace

GradflowOptions parse_gradflow_options(const std::vector<std::string>& argv) {
    Args args(argv, {"out",       "models",         "attention",  "cells",   "lengths",
                     "task",      "target-length",  "symbols",    "batch",   "seeds",
                     "seed",      "train-steps",    "lr",         "clip",    "embedding",
                     "hidden",    "attention-size", "run",        "threads", "measure-at",
                     "threshold", "window",         "seed-index", "heads",   "ff-size",
                     "layers"},
              {"quiet", "help"});
    if (!args.positional().empty())
        throw GradflowUsageError(
            fmt::format("gradflow: unexpected argument \"{}\"", args.positional().front()));
    GradflowOptions o;
    o.out_dir = args.get("out", o.out_dir);
    o.run_dirs = args.all("run");
    read_comparison(args, o);
    read_training(args, o);
    read_sizes(args, o);
    o.quiet = args.has("quiet");
    o.threads = std::max(1, args.get_int("threads", 1));
    return o;
}

}  // namespace seqgrad
