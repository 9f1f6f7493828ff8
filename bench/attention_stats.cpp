// What a model's attention does on a test set, by source-length bucket (docs/claims.md, claims
// 3 and 8): the test pairs go through the model in batches of consecutive pairs, so a batch
// mixes lengths as the file does; every target step is run with the gold previous token
// (teacher forcing, through Seq2Seq::step, the decoding path) and its attention row measured:
//   pad_weight    Σ_{s >= S_b} w_s, the weight on the padded positions of the row's batch
//                 (exactly 0 with the mask on)
//   entropy       H = −Σ_s w_s ln w_s (nats, over all positions), and H / ln S_b: 0 = one-hot,
//                 1 = uniform over the S_b real positions
//   score_var     the variance of the scores over the S_b real positions. The softmax is
//                 shift-invariant, log w_s = score_s − logsumexp, so it is the variance of
//                 log w_s (from the weights the step returns; exact where no weight underflows)
// Then the same batches are decoded greedily: exact match and BLEU (corpus, sacreBLEU's 13a,
// on the normalised text) per bucket. Prints a table; --csv also writes it as CSV (appended to,
// the header written when the file is new), with the --label columns first.
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

#include "apps/args.h"
#include "apps/run_args.h"
#include "seqgrad/data/bleu.h"
#include "seqgrad/models/decoding.h"
#include "seqgrad/models/run.h"
#include "seqgrad/models/translator.h"

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

// The statistics of one attention row [S] of a row with `valid` real positions.
void add_row(BucketStats& stats, const real* w, int64_t S, int64_t valid) {
    double pad = 0, entropy = 0, mean = 0, mean_sq = 0;
    for (int64_t s = 0; s < S; ++s) {
        const double x = double(w[s]);
        if (s >= valid) pad += x;
        if (x > 0) entropy -= x * std::log(x);
    }
    for (int64_t s = 0; s < valid; ++s) {
        const double l = std::log(std::max(double(w[s]), 1e-300));
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

}  // namespace

int main(int argc, char** argv) try {
    Args args(std::vector<std::string>(argv + 1, argv + argc),
              {"checkpoint", "config", "set", "test", "limit", "batch", "buckets", "label", "csv",
               "max-length"},
              {});
    // The model: a trained run, or a fresh one from a config (at initialisation).
    Config config;
    Task task;
    std::unique_ptr<Rng> rng;
    std::unique_ptr<Seq2Seq> owned;
    LoadedRun run;
    const Seq2Seq* model = nullptr;
    if (args.has("config")) {
        config = Config::load(args.get("config"), args.all("set"));
        task = prepare_task(config, true);
        rng = std::make_unique<Rng>(config.train.seed);
        owned = std::make_unique<Seq2Seq>(config.model, task.source_vocab.size(),
                                          task.target_vocab.size(), *rng);
        owned->eval();
        model = owned.get();
    } else {
        if (args.positional().size() != 1)
            throw Error(
                "usage: attention_stats RUN_DIR | --config FILE (see bench/attention_stats.cpp)");
        run = load_run_from_args(args, args.positional()[0]);
        config = run.config;
        task = std::move(run.task);
        model = run.model.get();
    }
    if (config.model.attention == "none")
        throw Error("attention_stats: the model has no attention");
    std::string origin;
    std::vector<SentencePair> pairs = load_test_set(args, config, origin);
    const size_t limit = size_t(args.get_int("limit", 0));
    if (limit > 0 && pairs.size() > limit) pairs.resize(limit);
    const std::vector<EncodedPair> encoded = task.encode(pairs);
    const int batch_size = args.get_int("batch", 64);
    if (batch_size < 1) throw Error("--batch: expected a positive integer");
    const std::vector<int> edges = parse_edges(args.get("buckets", "0"));
    DecodeOptions options = decode_options_from(config.decode);
    options.beam_size = 1;
    options.max_length = args.get_int("max-length", options.max_length);

    std::map<std::string, BucketStats> buckets;
    NoGradGuard no_grad;
    for (size_t first = 0; first < encoded.size(); first += size_t(batch_size)) {
        std::vector<size_t> rows;
        for (size_t i = first; i < std::min(encoded.size(), first + size_t(batch_size)); ++i)
            if (!encoded[i].source.empty()) rows.push_back(i);
        if (rows.empty()) continue;
        const Batch batch = make_batch(encoded, rows);
        const int64_t B = batch.batch_size, T = batch.tgt_len, S = batch.src_len;
        std::vector<std::string> name;
        for (int64_t b = 0; b < B; ++b)
            name.push_back(bucket_name(edges, batch.src_lengths[size_t(b)] - 1));
        // Teacher-forced steps through the decoding path.
        DecoderState state = model->initial_state(model->encode(batch));
        for (int64_t t = 0; t < T; ++t) {
            std::vector<int32_t> previous;
            for (int64_t b = 0; b < B; ++b) previous.push_back(batch.tgt_in[size_t(b * T + t)]);
            const StepResult step = model->step(previous, state);
            for (int64_t b = 0; b < B; ++b)
                if (batch.tgt_out[size_t(b * T + t)] != Vocab::PAD)
                    add_row(buckets[name[size_t(b)]], step.attention.data() + b * S, S,
                            batch.src_lengths[size_t(b)]);
        }
        // Greedy decoding of the same batch.
        const std::vector<Hypothesis> decoded = greedy_decode(
            *model, model->initial_state(model->encode(batch)), options, batch.src_lengths);
        for (int64_t b = 0; b < B; ++b) {
            BucketStats& stats = buckets[name[size_t(b)]];
            std::vector<int32_t> ids = decoded[size_t(b)].tokens;
            if (!ids.empty() && ids.back() == Vocab::EOS) ids.pop_back();
            const std::string hypothesis = task.decode_target(ids);
            const SentencePair& pair = pairs[rows[size_t(b)]];
            const std::string reference = task.pipeline.join(task.pipeline.tokens(pair.target));
            stats.sentences += 1;
            stats.exact += hypothesis == reference;
            stats.hypotheses.push_back(hypothesis);
            stats.references.push_back(reference);
        }
    }

    // --label k=v,k=v: leading columns k with values v (to tell runs apart in one CSV)
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
    fmt::print("{} ({} pairs, batches of {})\n", origin, pairs.size(), batch_size);
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
    if (args.has("csv")) {
        const std::string path = args.get("csv");
        const bool fresh = !std::ifstream(path).good();
        std::string text = csv.str();
        if (!fresh) text = text.substr(text.find('\n') + 1);  // the header is there already
        std::ofstream out(path, std::ios::app);
        out << text;
        out.close();
        if (!out) throw Error(fmt::format("attention_stats: cannot write {}", path));
    }
    return 0;
} catch (const std::exception& e) {
    fmt::print(stderr, "attention_stats: {}\n", e.what());
    return 1;
}
