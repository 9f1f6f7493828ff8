#include "seqgrad/models/run/task.h"

#include <fmt/format.h>

#include <filesystem>

#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/dates.h"
#include "seqgrad/data/file_io.h"
#include "seqgrad/data/reversible_tokenizer.h"

namespace seqgrad {

namespace {

// Case folding or accent stripping before the reversible pre-tokeniser, if the config asks.
std::vector<std::string> bpe_words(const TextPipeline& p, const std::string& text) {
    if (!p.normalize.lowercase && !p.normalize.strip_accents) return reversible_tokenize(text);
    NormalizeOptions o = p.normalize;
    o.separate_punctuation = false;
    o.collapse_whitespace = false;
    return reversible_tokenize(seqgrad::normalize(text, o));
}

const Bpe& segmenter(const std::shared_ptr<Bpe>& bpe) {
    if (!bpe) throw Error("the BPE codes of this pipeline are not loaded");
    return *bpe;
}

}  // namespace

std::vector<std::string> TextPipeline::tokens(const std::string& text) const {
    if (bpe) return segmenter(target_bpe).segment_words(bpe_words(*this, text));
    return tokenize(seqgrad::normalize(text, normalize), tokenizer);
}

std::vector<std::string> TextPipeline::source_tokens(const std::string& text) const {
    if (bpe) return segmenter(source_bpe).segment_words(bpe_words(*this, text));
    return tokens(text);
}

std::string TextPipeline::join(const std::vector<std::string>& tokens) const {
    if (!bpe) return detokenize(tokens, tokenizer);
    std::string segmented = detokenize(tokens, TokenizerKind::word);
    return reversible_detokenize(tokenize(undo_bpe(segmented), TokenizerKind::word));
}

bool TextPipeline::reversible() const {
    return bpe && !normalize.lowercase && !normalize.strip_accents;
}

TextPipeline make_pipeline(const DataConfig& d) {
    TextPipeline p;
    p.normalize.lowercase = d.lowercase;
    p.normalize.strip_accents = d.strip_accents;
    p.normalize.separate_punctuation = d.separate_punctuation;
    p.tokenizer = d.tokenizer == "word" ? TokenizerKind::word : TokenizerKind::character;
    p.bpe = d.tokenizer == "bpe";
    p.bpe_joint = d.bpe_joint;
    return p;
}

std::vector<int32_t> Task::encode_source(const std::string& text) const {
    return source_vocab.encode(pipeline.source_tokens(text), /*add_eos=*/true);
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

// One split of a TSV task. Bad lines left out under data.bad_lines "warn" or "skip" go into
// `skipped` and are reported: their count ("skip") or each of them ("warn"); a held-out split
// that lost lines gets a note of its own, as its scores leave them out.
static std::vector<SentencePair> read_split(const Config& c, const std::string& split,
                                            const std::string& path,
                                            std::vector<SkippedLine>& skipped, bool quiet) {
    CorpusOptions options;
    options.source_column = c.data.source_column;
    options.columns = size_t(c.data.columns);
    options.on_bad_line = on_bad_line_from_string(c.data.bad_lines);
    const std::string file = c.resolve(path);
    CorpusReadResult r = read_parallel_corpus(file, options);
    for (const BadLine& bad : r.bad_lines) skipped.push_back({split, file, bad});
    if (r.skipped == 0 || quiet) return r.pairs;
    fmt::print(stderr,
               "{}: skipped {} bad line{} (data.bad_lines \"{}\"; listed in the run "
               "directory, skipped_lines.tsv)\n",
               file, r.skipped, r.skipped == 1 ? "" : "s", c.data.bad_lines);
    if (options.on_bad_line == OnBadLine::warn)
        for (const BadLine& bad : r.bad_lines)
            fmt::print(stderr, "  {}:{}: {}\n", file, bad.line, bad.reason);
    if (split != "train")
        fmt::print(stderr,
                   "note: the {} split lost {} of its {} lines: its scores leave them out and are "
                   "not comparable with scores on the whole file\n",
                   split, r.skipped, r.skipped + r.pairs.size());
    return r.pairs;
}

void save_skipped_lines(const Task& task, const std::string& run_dir) {
    const std::string path = run_dir + "/skipped_lines.tsv";
    if (task.skipped.empty()) {
        std::filesystem::remove(path);
        return;
    }
    std::string text = "split\tfile\tline\treason\n";
    for (const SkippedLine& s : task.skipped)
        text += fmt::format("{}\t{}\t{}\t{}\n", s.split, s.file, s.bad.line, s.bad.reason);
    write_file_atomically(path, text);
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
        task.train = read_split(c, "train", c.data.train, task.skipped, quiet);
        task.valid = read_split(c, "valid", c.data.valid, task.skipped, quiet);
        if (!c.data.test.empty())
            task.test = read_split(c, "test", c.data.test, task.skipped, quiet);
    }
    if (task.train.empty()) throw Error(fmt::format("{}: no training pairs", task.name));
    if (task.valid.empty()) throw Error(fmt::format("{}: no validation pairs", task.name));
    return task;
}

// The merges of one set of codes, learned from the pre-tokenised words of `sides`.
static BpeCodes learn_codes(const Task& task, const DataConfig& d, bool source, bool target,
                            bool quiet) {
    WordCounts counts;
    for (const SentencePair& p : task.train) {
        if (source)
            for (const std::string& w : bpe_words(task.pipeline, p.source)) counts.add(w);
        if (target)
            for (const std::string& w : bpe_words(task.pipeline, p.target)) counts.add(w);
    }
    BpeLearnResult r = learn_bpe(counts, {d.bpe_merges, 2});
    if (r.stopped_early && !quiet)
        fmt::print(stderr,
                   "{}: data.bpe_merges = {}: learned {} merges{}, then no pair occurred twice; "
                   "stopping there (as subword-nmt does)\n",
                   task.name, d.bpe_merges, r.merges.size(),
                   source && target ? "" : (source ? " for the source" : " for the target"));
    return BpeCodes(std::move(r.merges));
}

// The vocabulary filter of one side: every token of its vocabulary.
static std::unordered_set<std::string> vocabulary_filter(const Vocab& vocab) {
    std::unordered_set<std::string> filter;
    for (size_t id = Vocab::num_special; id < vocab.size(); ++id)
        filter.insert(vocab.token(int32_t(id)));
    return filter;
}

// `vocab` plus every character of the segmented training text, written both as a word's last
// segment ("c") and inside a word ("c@@"): with the vocabulary filter, any word made of these
// characters then segments into known tokens, so it never becomes <unk>.
static Vocab with_all_characters(const Vocab& vocab,
                                 const std::vector<std::vector<std::string>>& sequences,
                                 const std::string& separator) {
    std::vector<std::string> tokens;
    std::unordered_set<std::string> seen;
    for (size_t id = Vocab::num_special; id < vocab.size(); ++id) {
        tokens.push_back(vocab.token(int32_t(id)));
        seen.insert(tokens.back());
    }
    for (const auto& sequence : sequences)
        for (const std::string& token : sequence) {
            std::string_view t = token;
            if (t.size() > separator.size() && t.substr(t.size() - separator.size()) == separator)
                t.remove_suffix(separator.size());
            for (char32_t c : decode_utf8(t)) {
                std::string single;
                append_utf8(single, c);
                for (std::string form : {single, single + separator})
                    if (seen.insert(form).second) tokens.push_back(form);
            }
        }
    return Vocab::from_tokens(tokens);
}

// model.share_embeddings "all" with joint BPE: the two sides' tokens form one vocabulary.
static bool joint_vocabulary(const Config& c) {
    return c.model.share_embeddings == "all" && c.data.tokenizer == "bpe" && c.data.bpe_joint;
}

// model.share_embeddings "all" reads both sides' ids in one embedding: the vocabularies must
// be one, token for token.
static void check_shared_vocabulary(const Config& c, const Task& task, const std::string& origin) {
    if (c.model.share_embeddings != "all") return;
    bool same = task.source_vocab.size() == task.target_vocab.size();
    for (size_t id = 0; same && id < task.source_vocab.size(); ++id)
        same = task.source_vocab.token(int32_t(id)) == task.target_vocab.token(int32_t(id));
    if (same) return;
    throw Error(fmt::format(
        "model.share_embeddings \"all\": the source and target vocabularies of {} differ (source "
        "{} tokens, target {}), and one embedding cannot serve both. Set data.tokenizer "
        "\"bpe\" with data.bpe_joint true (one joint vocabulary of both sides), or "
        "model.share_embeddings \"target\" (data.tokenizer is \"{}\"{})",
        origin, task.source_vocab.size(), task.target_vocab.size(), c.data.tokenizer,
        c.data.tokenizer == "bpe" ? fmt::format(", data.bpe_joint {}", c.data.bpe_joint) : ""));
}

Task prepare_task(const Config& c, bool quiet) {
    Task task = load_data(c, quiet);
    TextPipeline& p = task.pipeline;
    if (p.bpe) {
        if (p.bpe_joint) {
            BpeCodes codes = learn_codes(task, c.data, true, true, quiet);
            p.source_bpe = std::make_shared<Bpe>(codes);
            p.target_bpe = std::make_shared<Bpe>(codes);
        } else {
            p.source_bpe = std::make_shared<Bpe>(learn_codes(task, c.data, true, false, quiet));
            p.target_bpe = std::make_shared<Bpe>(learn_codes(task, c.data, false, true, quiet));
        }
    }
    std::vector<std::vector<std::string>> sources, targets;
    for (const auto& pair : task.train) {
        sources.push_back(p.source_tokens(pair.source));
        targets.push_back(p.tokens(pair.target));
    }
    VocabOptions options;
    options.min_freq = size_t(c.data.min_freq);
    options.max_size = size_t(c.data.max_vocab);
    if (joint_vocabulary(c)) {  // one vocabulary of both sides' tokens
        std::vector<std::vector<std::string>> both = sources;
        both.insert(both.end(), targets.begin(), targets.end());
        task.source_vocab = Vocab::build(both, options);
        const std::string& separator = p.source_bpe->options().separator;
        task.source_vocab = with_all_characters(task.source_vocab, both, separator);
        task.target_vocab = task.source_vocab;
        p.source_bpe->set_vocabulary(vocabulary_filter(task.source_vocab));
        p.target_bpe->set_vocabulary(vocabulary_filter(task.target_vocab));
    } else {
        task.source_vocab = Vocab::build(sources, options);
        task.target_vocab = Vocab::build(targets, options);
        if (p.bpe) {
            const std::string& separator = p.source_bpe->options().separator;
            task.source_vocab = with_all_characters(task.source_vocab, sources, separator);
            task.target_vocab = with_all_characters(task.target_vocab, targets, separator);
            p.source_bpe->set_vocabulary(vocabulary_filter(task.source_vocab));
            p.target_bpe->set_vocabulary(vocabulary_filter(task.target_vocab));
        }
    }
    check_shared_vocabulary(c, task, "the training data");
    return task;
}

static std::string codes_path(const std::string& run_dir, const char* side) {
    return run_dir + (side ? fmt::format("/bpe.{}.codes", side) : std::string("/bpe.codes"));
}

void save_bpe_codes(const TextPipeline& p, const std::string& run_dir) {
    if (!p.bpe) return;
    if (p.bpe_joint) {
        segmenter(p.source_bpe).codes().save(codes_path(run_dir, nullptr));
    } else {
        segmenter(p.source_bpe).codes().save(codes_path(run_dir, "source"));
        segmenter(p.target_bpe).codes().save(codes_path(run_dir, "target"));
    }
}

Task prepare_task_with_vocabs(const Config& c, const std::string& run_dir, bool with_data,
                              bool quiet) {
    Task task;
    if (with_data) task = load_data(c, quiet);
    task.pipeline = make_pipeline(c.data);
    if (!with_data) task.name = c.data.task == "dates" ? "dates" : c.data.train;
    task.source_vocab = Vocab::load(run_dir + "/vocab.source.json");
    task.target_vocab = Vocab::load(run_dir + "/vocab.target.json");
    TextPipeline& p = task.pipeline;
    if (p.bpe) {
        BpeCodes source = BpeCodes::load(codes_path(run_dir, p.bpe_joint ? nullptr : "source"));
        BpeCodes target = p.bpe_joint ? source : BpeCodes::load(codes_path(run_dir, "target"));
        BpeApplyOptions options;
        options.vocabulary = vocabulary_filter(task.source_vocab);
        p.source_bpe = std::make_shared<Bpe>(source, options);
        options.vocabulary = vocabulary_filter(task.target_vocab);
        p.target_bpe = std::make_shared<Bpe>(target, options);
    }
    check_shared_vocabulary(c, task, run_dir);
    return task;
}

}  // namespace seqgrad
