#include "models/task.h"

#include <fmt/format.h>

#include "autograd/tensor.h"
#include "data/dates.h"

namespace seqgrad {

std::vector<std::string> TextPipeline::tokens(const std::string& text) const {
    return tokenize(seqgrad::normalize(text, normalize), tokenizer);
}

std::string TextPipeline::join(const std::vector<std::string>& tokens) const {
    return detokenize(tokens, tokenizer);
}

TextPipeline make_pipeline(const DataConfig& d) {
    TextPipeline p;
    p.normalize.lowercase = d.lowercase;
    p.normalize.strip_accents = d.strip_accents;
    p.normalize.separate_punctuation = d.separate_punctuation;
    p.tokenizer = d.tokenizer == "word" ? TokenizerKind::word : TokenizerKind::character;
    return p;
}

std::vector<int32_t> Task::encode_source(const std::string& text) const {
    return source_vocab.encode(pipeline.tokens(text), /*add_eos=*/true);
}

std::string Task::decode_target(const std::vector<int32_t>& ids) const {
    return pipeline.join(target_vocab.decode(ids, /*strip_special=*/true));
}

std::vector<EncodedPair> Task::encode(const std::vector<SentencePair>& pairs) const {
    std::vector<EncodedPair> out;
    out.reserve(pairs.size());
    for (const auto& p : pairs)
        out.push_back(
            {encode_source(p.source), target_vocab.encode(pipeline.tokens(p.target), true)});
    return out;
}

static std::vector<SentencePair> read_split(const Config& c, const std::string& path, bool quiet) {
    CorpusOptions options;
    options.source_column = c.data.source_column;
    options.columns = size_t(c.data.columns);
    options.on_bad_line = on_bad_line_from_string(c.data.bad_lines);
    CorpusReadResult r = read_parallel_corpus(c.resolve(path), options);
    if (r.skipped > 0 && !quiet) {
        fmt::print(stderr, "{}: skipped {} bad lines\n", c.resolve(path), r.skipped);
        for (const auto& m : r.messages) fmt::print(stderr, "  {}\n", m);
    }
    return r.pairs;
}

static Task load_data(const Config& c, bool quiet) {
    Task task;
    task.pipeline = make_pipeline(c.data);
    if (c.data.task == "dates") {
        task.name = "dates";
        DateSplits s = make_date_splits(c.data.dates_train, c.data.dates_valid, c.data.dates_test,
                                        c.data.dates_seed);
        task.train = std::move(s.train);
        task.valid = std::move(s.valid);
        task.test = std::move(s.test);
    } else {
        task.name = c.data.train;
        task.train = read_split(c, c.data.train, quiet);
        task.valid = read_split(c, c.data.valid, quiet);
        if (!c.data.test.empty()) task.test = read_split(c, c.data.test, quiet);
    }
    if (task.train.empty()) throw Error(fmt::format("{}: no training pairs", task.name));
    if (task.valid.empty()) throw Error(fmt::format("{}: no validation pairs", task.name));
    return task;
}

Task prepare_task(const Config& c, bool quiet) {
    Task task = load_data(c, quiet);
    std::vector<std::vector<std::string>> sources, targets;
    for (const auto& p : task.train) {
        sources.push_back(task.pipeline.tokens(p.source));
        targets.push_back(task.pipeline.tokens(p.target));
    }
    VocabOptions options;
    options.min_freq = size_t(c.data.min_freq);
    options.max_size = size_t(c.data.max_vocab);
    task.source_vocab = Vocab::build(sources, options);
    task.target_vocab = Vocab::build(targets, options);
    return task;
}

Task prepare_task_with_vocabs(const Config& c, const std::string& run_dir, bool with_data,
                              bool quiet) {
    Task task;
    if (with_data) task = load_data(c, quiet);
    task.pipeline = make_pipeline(c.data);
    if (!with_data) task.name = c.data.task == "dates" ? "dates" : c.data.train;
    task.source_vocab = Vocab::load(run_dir + "/vocab.source.json");
    task.target_vocab = Vocab::load(run_dir + "/vocab.target.json");
    return task;
}

}  // namespace seqgrad
