// What a model's attention does on a test set, by source-length bucket (docs/claims.md, claims
// 3 and 8): the test pairs go through the model in batches of consecutive pairs, so a batch
// mixes lengths as the file does; the model's teacher-forced pass (forward_loss, every target
// step fed the gold previous token) fills a ForwardRecord (models/model/forward_record.h), and
// every real step's attention row is measured:
//   pad_weight    Σ_{s >= S_b} w_s, the weight on the padded positions of the row's batch
//                 (exactly 0 with the mask on)
//   entropy       H = −Σ_s w_s ln w_s (nats, over all positions), and H / ln S_b: 0 = one-hot,
//                 1 = uniform over the S_b real positions
//   score_var     the variance of the scores (before the softmax, the record's
//                 attention_scores) over the S_b real positions.
// A pass with a record keeps the batch's row order, so row b of every step is sentence b.
// Then the same batches are decoded greedily: exact match and BLEU (corpus, sacreBLEU's 13a,
// on the normalised text) per bucket. Prints a table; --csv also writes it as CSV (appended to,
// the header written when the file is new), with the --label columns first. The model needs
// attention per decoder step in its record: the RNN encoder-decoder's.
//
// usage: attention_stats (RUN_DIR [--checkpoint best|last] | --config FILE [--set k=v ...])
//                        [--test FILE.tsv] [--limit N] [--batch B] [--buckets 20,40,...]
//                        [--label k=v,...] [--csv FILE] [--max-length N]
//   --config builds a fresh model from the config (seeded with train.seed): the model at
//   initialisation. Buckets are source lengths in tokens (EOS not counted), [edge_k, edge_k+1).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "apps/cli/args.h"
#include "apps/cli/run_args.h"
#include "seqgrad/data/bleu.h"
#include "seqgrad/models/decoding/decoding.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/model/translation_model.h"
#include "seqgrad/models/run/run.h"

using namespace seqgrad;

namespace {

struct BucketStats {
    int64_t sentences = 0, exact = 0, steps = 0;
    double pad_weight = 0, entropy = 0, entropy_norm = 0, score_var = 0;
    std::vector<std::string> hypotheses, references;
};

std::vector<int> parse_edges(const std::string& text) {
    std::vector<int> edges;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        try {
            edges.push_back(std::stoi(item));
        } catch (const std::exception&) {
            throw Error(
                fmt::format("--buckets: '{}' is not an integer (expected e.g. 20,40,60)", item));
        }
        if (edges.size() > 1 && edges.back() <= edges[edges.size() - 2])
            throw Error("--buckets: the edges must increase");
    }
    if (edges.empty()) throw Error("--buckets: expected at least one edge");
    return edges;
}

std::string bucket_name(const std::vector<int>& edges, int length) {
    if (length < edges.front()) return fmt::format("<{}", edges.front());
    for (size_t k = 0; k + 1 < edges.size(); ++k)
        if (length < edges[k + 1]) return fmt::format("{}-{}", edges[k], edges[k + 1] - 1);
    return fmt::format(">={}", edges.back());
}

// The statistics of one attention row: weights w [S] and scores [S], `valid` real positions.
void add_row(BucketStats& stats, const real* w, const real* scores, int64_t S, int64_t valid) {
    double pad = 0, entropy = 0, mean = 0, mean_sq = 0;
    for (int64_t s = 0; s < S; ++s) {
        const double x = double(w[s]);
        if (s >= valid) pad += x;
        if (x > 0) entropy -= x * std::log(x);
    }
    for (int64_t s = 0; s < valid; ++s) {
        const double l = double(scores[s]);
        mean += l;
        mean_sq += l * l;
    }
    mean /= double(valid);
    stats.pad_weight += pad;
    stats.entropy += entropy;
    stats.entropy_norm += valid > 1 ? entropy / std::log(double(valid)) : 0.0;
    stats.score_var += std::max(0.0, mean_sq / double(valid) - mean * mean);
    stats.steps += 1;
}

// The model: a trained run (RUN_DIR), or a fresh one from --config (at initialisation).
struct Model {
    Config config;
    Task task;
    std::unique_ptr<Rng> rng;
    std::unique_ptr<TranslationModel> fresh;
    LoadedRun run;
    const TranslationModel* model = nullptr;
};

std::unique_ptr<Model> load_model(const Args& args) {
    auto m = std::make_unique<Model>();
    if (args.has("config")) {
        m->config = Config::load(args.get("config"), args.all("set"));
        m->task = prepare_task(m->config, true);
        m->rng = std::make_unique<Rng>(m->config.train.seed);
        m->fresh = make_model(m->config.model, m->task.source_vocab.size(),
                              m->task.target_vocab.size(), *m->rng);
        m->fresh->eval();
        m->model = m->fresh.get();
    } else {
        if (args.positional().size() != 1)
            throw Error(
                "usage: attention_stats RUN_DIR | --config FILE (see bench/attention_stats.cpp)");
        m->run = load_run_from_args(args, args.positional()[0]);
        m->config = m->run.config;
        m->task = std::move(m->run.task);
        m->model = m->run.model.get();
    }
    if (m->config.model.attention == "none")
        throw Error("attention_stats: the model has no attention");
    return m;
}

// Every target step of `batch`, teacher-forced, from the model's forward record: each real
// step's attention row goes to its sentence's bucket.
void measure_attention(const Model& m, const Batch& batch, const std::vector<std::string>& names,
                       std::map<std::string, BucketStats>& buckets) {
    const int64_t T = batch.tgt_len, S = batch.src_len;
    ForwardRecord record;
    m.model->forward_loss(batch, {}, &record);
    if (record.attention.empty() || record.attention_scores.size() != record.attention.size())
        throw Error(
            fmt::format("a model.kind \"{}\" model records no attention per decoder step; "
                        "this benchmark measures RNN attention only",
                        m.config.model.kind));
    for (size_t t = 0; t < record.attention.size(); ++t) {
        const Tensor& weights = record.attention[t];  // [n_t,S]: the batch's first n_t rows
        const Tensor& scores = record.attention_scores[t];
        for (int64_t b = 0; b < weights.size(0); ++b)
            if (batch.tgt_out[size_t(b * T + int64_t(t))] != Vocab::PAD)
                add_row(buckets[names[size_t(b)]], weights.data() + b * S, scores.data() + b * S, S,
                        batch.src_lengths[size_t(b)]);
    }
}

// Greedy decoding of `batch` (rows `rows` of `pairs`): exact match and the texts for BLEU.
void measure_decoding(const Model& m, const Batch& batch, const std::vector<SentencePair>& pairs,
                      const std::vector<size_t>& rows, const std::vector<std::string>& names,
                      const DecodeOptions& options, std::map<std::string, BucketStats>& buckets) {
    const std::vector<Hypothesis> decoded =
        greedy_decode(*m.model, m.model->start_decoding(batch), options, batch.src_lengths);
    for (size_t b = 0; b < rows.size(); ++b) {
        BucketStats& stats = buckets[names[b]];
        std::vector<int32_t> ids = decoded[b].tokens;
        if (!ids.empty() && ids.back() == Vocab::EOS) ids.pop_back();
        const std::string hypothesis = m.task.decode_target(ids);
        const std::string target = pairs[rows[b]].target;
        const std::string reference = m.task.pipeline.join(m.task.pipeline.tokens(target));
        stats.sentences += 1;
        stats.exact += hypothesis == reference;
        stats.hypotheses.push_back(hypothesis);
        stats.references.push_back(reference);
    }
}

// Prints the table and returns it as CSV, with the --label k=v,k=v columns first.
std::string report(const Args& args, const std::map<std::string, BucketStats>& buckets,
                   const std::vector<int>& edges) {
    std::string label_keys, label_values;
    if (args.has("label")) {
        std::stringstream in(args.get("label"));
        std::string item;
        while (std::getline(in, item, ',')) {
            const size_t eq = item.find('=');
            if (eq == std::string::npos)
                throw Error(fmt::format("--label: '{}' is not key=value", item));
            label_keys += item.substr(0, eq) + ",";
            label_values += item.substr(eq + 1) + ",";
        }
    }
    std::ostringstream csv;
    csv << label_keys
        << "bucket,bucket_lo,sentences,steps,pad_weight,entropy,entropy_norm,score_var,"
           "exact_match,bleu\n";
    fmt::print("{:>10} {:>9} {:>10} {:>10} {:>9} {:>12} {:>10} {:>11} {:>7}\n", "bucket",
               "sentences", "steps", "pad_weight", "entropy", "entropy/lnS", "score_var",
               "exact_match", "BLEU");
    // Buckets in the order of their edges.
    std::vector<std::string> order{bucket_name(edges, edges.front() - 1)};
    for (size_t k = 0; k < edges.size(); ++k) order.push_back(bucket_name(edges, edges[k]));
    for (const std::string& key : order) {
        auto it = buckets.find(key);
        if (it == buckets.end()) continue;
        const BucketStats& s = it->second;
        const double n = double(std::max<int64_t>(s.steps, 1));
        const double exact = double(s.exact) / double(std::max<int64_t>(s.sentences, 1));
        const double bleu = corpus_bleu(s.hypotheses, {s.references}).score;
        fmt::print(
            "{:>10} {:>9} {:>10} {:>10.4f} {:>9.3f} {:>12.3f} {:>10.3f} {:>11.3f} {:>7.2f}\n", key,
            s.sentences, s.steps, s.pad_weight / n, s.entropy / n, s.entropy_norm / n,
            s.score_var / n, exact, bleu);
        const int lo = key[0] == '<' ? 0 : std::stoi(key.substr(key[0] == '>' ? 2 : 0));
        csv << label_values
            << fmt::format("{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.4f}\n", key, lo,
                           s.sentences, s.steps, s.pad_weight / n, s.entropy / n,
                           s.entropy_norm / n, s.score_var / n, exact, bleu);
    }
    return csv.str();
}

// Appends `csv` to `path`, without its header line when the file exists already.
void append_csv(const std::string& path, std::string csv) {
    if (std::ifstream(path).good()) csv = csv.substr(csv.find('\n') + 1);
    std::ofstream out(path, std::ios::app);
    out << csv;
    out.close();
    if (!out) throw Error(fmt::format("attention_stats: cannot write {}", path));
}

}  // namespace

int main(int argc, char** argv) try {
    Args args(std::vector<std::string>(argv + 1, argv + argc),
              {"checkpoint", "config", "set", "test", "limit", "batch", "buckets", "label", "csv",
               "max-length"},
              {});
    const std::unique_ptr<Model> m = load_model(args);
    std::string origin;
    std::vector<SentencePair> pairs = load_test_set(args, m->config, origin);
    const size_t limit = size_t(args.get_int("limit", 0));
    if (limit > 0 && pairs.size() > limit) pairs.resize(limit);
    const std::vector<EncodedPair> encoded = m->task.encode(pairs);
    const int batch_size = args.get_int("batch", 64);
    if (batch_size < 1) throw Error("--batch: expected a positive integer");
    const std::vector<int> edges = parse_edges(args.get("buckets", "0"));
    DecodeOptions options = decode_options_from(m->config.decode);
    options.beam_size = 1;
    options.max_length = args.get_int("max-length", options.max_length);

    // Batches of consecutive pairs: lengths mixed as the file has them.
    std::map<std::string, BucketStats> buckets;
    NoGradGuard no_grad;
    for (size_t first = 0; first < encoded.size(); first += size_t(batch_size)) {
        std::vector<size_t> rows;
        for (size_t i = first; i < std::min(encoded.size(), first + size_t(batch_size)); ++i)
            if (!encoded[i].source.empty()) rows.push_back(i);
        if (rows.empty()) continue;
        const Batch batch = make_batch(encoded, rows);
        std::vector<std::string> names;  // each row's bucket
        for (int64_t b = 0; b < batch.batch_size; ++b)
            names.push_back(bucket_name(edges, batch.src_lengths[size_t(b)] - 1));
        measure_attention(*m, batch, names, buckets);
        measure_decoding(*m, batch, pairs, rows, names, options, buckets);
    }
    fmt::print("{} ({} pairs, batches of {})\n", origin, pairs.size(), batch_size);
    const std::string csv = report(args, buckets, edges);
    if (args.has("csv")) append_csv(args.get("csv"), csv);
    return 0;
} catch (const std::exception& e) {
    fmt::print(stderr, "attention_stats: {}\n", e.what());
    return 1;
}
