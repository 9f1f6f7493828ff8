// A tiny seq2seq model trained through seqgrad's public API: learn to reverse a sequence of
// digits ("3 1 4" -> "4 1 3"). It builds batches by hand, trains with Adam, decodes greedily,
// and carries the trained weights into a second model with state() / load_state().
// Exits non-zero unless the model learns the task.
#include <seqgrad/autograd/rng.h>
#include <seqgrad/data/batching.h>
#include <seqgrad/data/vocab.h>
#include <seqgrad/models/decoding/decoding.h>
#include <seqgrad/models/model/seq2seq.h>
#include <seqgrad/optim/adam.h>
#include <seqgrad/optim/clip.h>

#include <cstdio>
#include <vector>

using namespace seqgrad;

namespace {

constexpr int32_t kFirstDigit = 4;  // ids 0..3 are PAD, SOS, EOS, UNK (data/vocab.h)
constexpr int64_t kVocab = kFirstDigit + 10;

// A random digit sequence and its reverse, as token ids; the target ends with EOS.
EncodedPair random_pair(Rng& rng) {
    EncodedPair pair;
    const int length = 3 + int(rng.uniform(0, 4));  // 3..6 digits
    for (int i = 0; i < length; ++i)
        pair.source.push_back(kFirstDigit + int32_t(rng.uniform(0, 10)));
    pair.target.assign(pair.source.rbegin(), pair.source.rend());
    pair.target.push_back(Vocab::EOS);
    return pair;
}

// Exact-match accuracy of greedy decoding on `pairs`.
double accuracy(const Seq2Seq& model, const std::vector<EncodedPair>& pairs) {
    std::vector<size_t> rows(pairs.size());
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    const Batch batch = make_batch(pairs, rows);
    NoGradGuard no_grad;
    DecodeOptions greedy;
    greedy.max_length = 10;
    const std::vector<Hypothesis> out =
        greedy_decode(model, model.initial_state(model.encode(batch)), greedy);
    int correct = 0;
    for (size_t i = 0; i < pairs.size(); ++i) correct += out[i].tokens == pairs[i].target;
    return double(correct) / double(pairs.size());
}

}  // namespace

int main() {
    Rng data_rng(7);
    std::vector<EncodedPair> train, test;
    for (int i = 0; i < 2000; ++i) train.push_back(random_pair(data_rng));
    for (int i = 0; i < 200; ++i) test.push_back(random_pair(data_rng));

    ModelConfig config;  // models/run/config.h: the same fields as a config file's "model" section
    config.embedding_size = 16;
    config.hidden_size = 64;
    config.attention = "bahdanau";
    config.attention_size = 32;
    Rng rng(1);  // the model keeps a reference to it (dropout, teacher forcing): keep it alive
    Seq2Seq model(config, kVocab, kVocab, rng);
    AdamOptions adam;
    adam.lr = 0.01;
    Adam optimizer(model.named_parameters(), adam);

    const size_t batch_size = 32;
    double loss = 0;
    for (int epoch = 0; epoch < 6; ++epoch) {
        for (size_t begin = 0; begin + batch_size <= train.size(); begin += batch_size) {
            std::vector<size_t> rows;
            for (size_t i = begin; i < begin + batch_size; ++i) rows.push_back(i);
            // forward_loss reads src_ids, src_lengths, tgt_in, tgt_out and tgt_lengths
            const Batch batch = make_batch(train, rows);
            // one step of gradient descent (`seqgrad train` runs the same loop as train_step,
            // models/training/train_step.h)
            optimizer.zero_grad();
            LossOutput out = model.forward_loss(batch);
            out.loss.backward();
            clip_grad_norm(model.parameters(), 1.0);
            optimizer.step();
            loss = double(out.loss.item());
        }
        std::printf("epoch %d: loss %.4f, test accuracy %.1f%%\n", epoch + 1, loss,
                    100 * accuracy(model, test));
    }

    // The weights, by name, into a fresh model of the same shape.
    Rng other_rng(2);
    Seq2Seq copy(config, kVocab, kVocab, other_rng);
    copy.load_state(model.state());
    const double trained = accuracy(model, test), copied = accuracy(copy, test);
    std::printf("real = %s; %zu parameters; copied model's accuracy %.1f%%\n",
                sizeof(real) == 8 ? "double" : "float", model.state().size(), 100 * copied);
    return trained > 0.8 && copied == trained ? 0 : 1;
}
