// seqgrad-exercises-train: the capstone (`seqgrad exercises train-dates`). Trains the date model
// (configs/dates.json's sizes and schedule) with the learner's parts where their exercises are
// done, and prints the exact match on the test dates.
//
// The model is the library's Bahdanau seq2seq written out plainly: embeddings, a GRU encoder
// (seqgrad's), and a decoder that at step t attends with h_{t-1} (the learner's Bahdanau
// attention and masked softmax), reads [emb(y_{t-1}); c_t] into the learner's GRU cell, and
// projects h_t to the target vocabulary; the learner's cross-entropy and Adam train it.
#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "apps/exercises/capstone_parts.h"
#include "seqgrad/autograd/kernels/gemm.h"
#include "seqgrad/data/batching.h"
#include "seqgrad/layers/embedding.h"
#include "seqgrad/layers/gru.h"
#include "seqgrad/layers/linear.h"
#include "seqgrad/layers/loss.h"
#include "seqgrad/models/decoding/decoding.h"
#include "seqgrad/models/run/task.h"
#include "seqgrad/optim/adam.h"
#include "seqgrad/optim/clip.h"

#ifndef SEQGRAD_SOURCE_DIR
#define SEQGRAD_SOURCE_DIR "."
#endif

namespace seqgrad::grading {
namespace {

class DateModel : public Module, public StepModel {
  public:
    DateModel(const ModelConfig& c, int64_t source_vocab, int64_t target_vocab, Rng& rng,
              const ExerciseTable& t, const LearnerParts& parts)
        : source_embedding(source_vocab, c.embedding_size, 0, rng),
          encoder(c.embedding_size, c.hidden_size, 1, false, 0, rng),
          target_embedding(target_vocab, c.embedding_size, 0, rng),
          attention(c.hidden_size, c.hidden_size, c.attention_size, rng, t, parts),
          cell(c.embedding_size + c.hidden_size, c.hidden_size, rng, t, parts),
          out(c.hidden_size, target_vocab, true, rng),
          t_(t),
          parts_(parts),
          target_vocab_(target_vocab) {
        register_module("source_embedding", source_embedding);
        register_module("encoder", encoder);
        register_module("target_embedding", target_embedding);
        register_module("attention", attention);
        register_module("cell", cell);
        register_module("out", out);
    }

    struct State : DecoderState {
        Tensor h;                // [N,H]
        Tensor encoder_outputs;  // [N,S,H]
        Tensor keys_projected;   // [N,S,A]
        Tensor mask;             // [N,S]
        int64_t rows() const override { return h.size(0); }
        std::unique_ptr<DecoderState> select(const std::vector<int32_t>& rows) const override {
            auto s = std::make_unique<State>(*this);
            for (Tensor* t : {&s->h, &s->encoder_outputs, &s->keys_projected, &s->mask})
                *t = select_rows(*t, rows, "DateModel");
            return s;
        }
    };
    std::unique_ptr<State> encode(const std::vector<int32_t>& ids, int64_t B, int64_t S,
                                  const std::vector<int32_t>& lengths) const {
        RecurrentOutput enc = encoder.forward(source_embedding.forward(ids, {B, S}), lengths);
        auto s = std::make_unique<State>();
        s->mask = parts_.masked_softmax ? t_.padding_mask(lengths, S) : padding_mask(lengths, S);
        s->h = reshape(enc.final_hidden, {B, encoder.hidden_size()});
        s->encoder_outputs = enc.outputs;
        s->keys_projected = attention.project_keys(enc.outputs);
        return s;
    }
    // one decoder step: the new h_t (state updated)
    Tensor decode_step(const std::vector<int32_t>& previous, State& s) const {
        const int64_t n = int64_t(previous.size());
        Tensor context = attention.forward(s.h, s.encoder_outputs, s.keys_projected, s.mask).context;
        Tensor input = concat({target_embedding.forward(previous, {n}), context}, 1);
        s.h = cell.step(input, {s.h, Tensor()}).h;
        ++s.step;
        return s.h;
    }
    Tensor loss(const Batch& b) const {
        const std::unique_ptr<State> state = encode(b.src_ids, b.batch_size, b.src_len, b.src_lengths);
        State& s = *state;
        std::vector<Tensor> hidden;
        for (int t = 0; t < b.tgt_len; ++t) {
            std::vector<int32_t> previous(size_t(b.batch_size));
            for (int r = 0; r < b.batch_size; ++r)
                previous[size_t(r)] = b.tgt_in[size_t(r * b.tgt_len + t)];
            hidden.push_back(decode_step(previous, s));
        }
        // logits [B*T, V] in batch-major order, as tgt_out
        Tensor h = reshape(stack(hidden, 1), {int64_t(b.batch_size) * b.tgt_len, -1});
        Tensor logits = out.forward(h);
        return parts_.cross_entropy ? t_.cross_entropy(logits, b.tgt_out, 0, 0)
                                    : cross_entropy(logits, b.tgt_out, 0);
    }

    int64_t vocab_size() const override { return target_vocab_; }
    StepResult step(const std::vector<int32_t>& previous, DecoderState& s) const override {
        return {log_softmax(out.forward(decode_step(previous, state_of<State>(s, "DateModel")))),
                Tensor()};
    }

    Embedding source_embedding;
    GRU encoder;
    Embedding target_embedding;
    LearnerBahdanau attention;
    LearnerGRUCell cell;
    Linear out;

  private:
    const ExerciseTable& t_;
    LearnerParts parts_;
    int64_t target_vocab_;
};

// Exact match of greedy outputs on `pairs` (decoded in batches).
double exact_match(const DateModel& model, const Task& task, const std::vector<EncodedPair>& pairs,
                   int max_length) {
    NoGradGuard no_grad;
    DecodeOptions options;
    options.max_length = max_length;
    options.keep_attention = false;
    int64_t right = 0;
    for (size_t start = 0; start < pairs.size(); start += 250) {
        std::vector<size_t> rows;
        for (size_t i = start; i < std::min(pairs.size(), start + 250); ++i) rows.push_back(i);
        Batch b = make_batch(pairs, rows);
        auto hyps =
            greedy_decode(model, model.encode(b.src_ids, b.batch_size, b.src_len, b.src_lengths),
                          options);
        for (size_t i = 0; i < rows.size(); ++i)
            right +=
                task.decode_target(hyps[i].tokens) == task.decode_target(pairs[rows[i]].target);
    }
    return 100.0 * double(right) / double(pairs.size());
}

// train-dates' arguments: --config FILE and --set key=value (or --help).
struct TrainDatesArgs {
    std::string config_path = std::string(SEQGRAD_SOURCE_DIR) + "/configs/dates.json";
    std::vector<std::string> overrides;
    bool help = false;
};

TrainDatesArgs parse_train_dates_args(const std::vector<std::string>& args) {
    TrainDatesArgs parsed;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--config" && i + 1 < args.size())
            parsed.config_path = args[++i];
        else if (args[i] == "--set" && i + 1 < args.size())
            parsed.overrides.push_back(args[++i]);
        else if (args[i] == "--help" || args[i] == "-h")
            parsed.help = true;
        else
            throw std::runtime_error("train-dates: unknown argument " + args[i]);
    }
    return parsed;
}

// The learner's Adam when it is written, else the library's.
std::unique_ptr<Optimizer> make_date_optimizer(const DateModel& model, double lr,
                                               const ExerciseTable& table,
                                               const LearnerParts& parts) {
    if (parts.adam) return std::make_unique<LearnerAdam>(model.named_parameters(), lr, table);
    AdamOptions o;
    o.lr = lr;
    return std::make_unique<Adam>(model.named_parameters(), o);
}

// One epoch of zero_grad, loss, backward, clip (the learner's when its Adam is), step; returns
// the mean loss. A loss that is not finite stops with the parts to check.
double train_epoch(DateModel& model, Optimizer& optimizer, const Batcher& batcher, int epoch,
                   double clip_norm, const ExerciseTable& table, const LearnerParts& parts,
                   int64_t& steps) {
    const std::vector<Tensor> params = model.parameters();
    EpochIterator it(batcher, uint64_t(epoch));
    double total = 0;
    steps = 0;
    while (it.has_next()) {
        Batch b = it.next();
        optimizer.zero_grad();
        Tensor loss = model.loss(b);
        if (!std::isfinite(loss.item()))
            throw std::runtime_error(
                fmt::format("the loss is {} at epoch {} step {}: check the "
                            "parts marked `yours` with `seqgrad exercises check`",
                            loss.item(), epoch + 1, steps + 1));
        loss.backward();
        if (clip_norm > 0) {
            if (parts.adam)
                table.clip_grad_norm(params, clip_norm);
            else
                clip_grad_norm(params, clip_norm);
        }
        optimizer.step();
        total += loss.item(), ++steps;
    }
    return total / double(std::max<int64_t>(steps, 1));
}

int train_dates(const std::vector<std::string>& argv) {
    const TrainDatesArgs args = parse_train_dates_args(argv);
    if (args.help) {
        fmt::print("usage: seqgrad exercises train-dates [--config FILE] [--set key=value ...]\n");
        return 0;
    }
    const auto start = std::chrono::steady_clock::now();
    auto seconds = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    set_blas_threads(1);  // small products: one thread, no idle threads spinning
    Config config = Config::load(args.config_path, args.overrides);
    const ExerciseTable table = learner_table();
    LearnerParts parts = probe_parts(table);
    fmt::print("train-dates: the date model of {} with these parts:\n{}\n", args.config_path,
               parts.describe());
    Task task = prepare_task(config, true);
    std::vector<EncodedPair> train = task.encode(task.train), test = task.encode(task.test);
    Rng rng(uint64_t(config.train.seed));
    DateModel model(config.model, int64_t(task.source_vocab.size()),
                    int64_t(task.target_vocab.size()), rng, table, parts);
    std::unique_ptr<Optimizer> optimizer = make_date_optimizer(model, config.train.lr, table, parts);
    BatchingOptions batching;
    batching.batch_size = config.train.batch_size;
    batching.max_source_length = size_t(config.data.max_source_len);
    batching.max_target_length = size_t(config.data.max_target_len);
    batching.seed = uint64_t(config.train.seed);
    Batcher batcher(train, batching);
    for (int epoch = 0; epoch < config.train.epochs; ++epoch) {
        int64_t steps = 0;
        const double mean_loss = train_epoch(model, *optimizer, batcher, epoch,
                                             config.train.clip_norm, table, parts, steps);
        fmt::print("epoch {}: mean loss {:.4f} over {} steps ({:.0f} s)\n", epoch + 1, mean_loss,
                   steps, seconds());
        std::fflush(stdout);
    }
    model.eval();
    double em = exact_match(model, task, test, config.decode.max_length);
    fmt::print("exact match on the {} test dates: {:.2f}% ({:.0f} s in all){}\n", test.size(), em,
               seconds(),
               em >= 99 ? "" : "  (below 99%: `seqgrad exercises check` the parts marked yours)");
    return em >= 99 ? 0 : 1;
}

}  // namespace
}  // namespace seqgrad::grading

int main(int argc, char** argv) {
    try {
        return seqgrad::grading::train_dates(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::exception& e) {
        fmt::print(stderr, "seqgrad exercises train-dates: {}\n", e.what());
        return 2;
    }
}
