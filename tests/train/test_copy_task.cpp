// The pieces learn together: a tiny attention model (Embedding, GRU, attention, cross-entropy,
// Adam with clipping) learns to reverse random sequences.
#include <doctest/doctest.h>

#include <cmath>

#include "apps/studies/saliency.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/models/decoding/decoding.h"
#include "seqgrad/models/model/seq2seq.h"
#include "seqgrad/optim/adam.h"
#include "seqgrad/optim/clip.h"

using namespace seqgrad;

namespace {

// Random sequences over 10 symbols (ids 4..13), length 3..8; the target is the reverse.
Batch reverse_batch(Rng& rng, int batch_size) {
    std::vector<EncodedPair> pairs;
    std::vector<size_t> indices;
    for (int i = 0; i < batch_size; ++i) {
        int length = 3 + int(rng.below(6));
        EncodedPair p;
        for (int t = 0; t < length; ++t) p.source.push_back(4 + int32_t(rng.below(10)));
        p.target.assign(p.source.rbegin(), p.source.rend());
        p.source.push_back(Vocab::EOS);
        p.target.push_back(Vocab::EOS);
        pairs.push_back(p);
        indices.push_back(size_t(i));
    }
    return make_batch(pairs, indices);
}

// Output step t of a reversal of 6 tokens is the source token at 5-t and nothing else: the
// saliency of each step (apps/studies/saliency.h) should peak there. Measured on these models
// (72 steps each): Luong general, which attends with the current state, peaks exactly there at
// every step by gradient norm and by gradient x input. Bahdanau peaks there at about half the
// steps and within one position at 68 of 72: its unidirectional encoder's state at s+1 also
// holds token s, and the gradient reaches e_{s+1} through that state directly. Integrated
// gradients from zero embeddings peak exactly at about half the steps of either model, within
// one position at 53 (Bahdanau) and 62 (Luong) of 72: the zero baseline is no token at all, and
// the path from it crosses embeddings the model never saw.
void check_saliency_peaks(const Seq2Seq& model, const std::string& attention, Rng& data) {
    int steps = 0;
    int exact[3] = {0, 0, 0}, near[3] = {0, 0, 0};  // grad_norm, grad_input, integrated
    SaliencyOptions options;
    options.integrated_gradients = true;
    options.steps = 8;
    for (int k = 0; k < 12; ++k) {
        std::vector<int32_t> source;
        for (int t = 0; t < 6; ++t) source.push_back(4 + int32_t(data.below(10)));
        std::vector<int32_t> target(source.rbegin(), source.rend());
        source.push_back(Vocab::EOS);
        target.push_back(Vocab::EOS);
        const Saliency s = compute_saliency(model, source, target, options);
        for (int t = 0; t < 6; ++t) {  // the EOS step depends on the length, not on one token
            ++steps;
            for (int m = 0; m < 3; ++m) {
                const std::vector<double>& row = (m == 0   ? s.grad_norm
                                                  : m == 1 ? s.grad_input
                                                           : s.integrated_gradients)[size_t(t)];
                int peak = 0;
                for (int i = 1; i < int(row.size()); ++i)
                    if (std::fabs(row[size_t(i)]) > std::fabs(row[size_t(peak)])) peak = i;
                exact[m] += peak == 5 - t;
                near[m] += std::abs(peak - (5 - t)) <= 1;
            }
        }
    }
    INFO("peaks on the copied token (grad_norm, grad_input, integrated): "
         << exact[0] << ", " << exact[1] << ", " << exact[2] << "; within one position: " << near[0]
         << ", " << near[1] << ", " << near[2] << " of " << steps);
    if (attention == "luong_general") {
        CHECK(exact[0] >= 0.9 * steps);
        CHECK(exact[1] >= 0.9 * steps);
    } else {
        CHECK(near[0] >= 0.9 * steps);
    }
    CHECK(near[2] >= 0.6 * steps);
}

}  // namespace

TEST_CASE("a tiny attention model learns to reverse sequences (> 95% token accuracy)") {
    for (const char* attention : {"bahdanau", "luong_general"}) {
        INFO("attention " << attention);
        ModelConfig c;
        c.embedding_size = 16;
        c.hidden_size = 48;
        c.attention = attention;
        c.attention_size = 32;
        Rng rng(3);
        Seq2Seq model(c, 14, 14, rng);
        AdamOptions o;
        o.lr = 0.01;
        Adam adam(model.named_parameters(), o);
        Rng data(11);
        // 600 steps at lr 0.01, then 200 at 0.002. At a constant 0.01 the Bahdanau model's
        // final accuracy moved between 0.91 and 0.99 with the rounding of the gradient sums
        // alone (BLAS on 1 or 2 threads, how the steps' products were grouped); with the lower
        // rate at the end it reached 1.0 for every data seed tried (11-14), both ways.
        for (int step = 0; step < 800; ++step) {
            if (step == 600) adam.set_lr(0.002);
            Batch batch = reverse_batch(data, 32);
            adam.zero_grad();
            LossOutput out = model.forward_loss(batch);
            out.loss.backward();
            clip_grad_norm(model.parameters(), 1.0);
            adam.step();
        }
        // Held-out batches, decoded greedily (no teacher forcing): token accuracy.
        model.eval();
        int64_t correct = 0, total = 0;
        for (int k = 0; k < 4; ++k) {
            NoGradGuard no_grad;
            Batch batch = reverse_batch(data, 64);
            auto state = model.initial_state(model.encode(batch));
            DecodeOptions greedy;
            greedy.max_length = 12;
            std::vector<Hypothesis> hyps = greedy_decode(model, std::move(state), greedy, batch.src_lengths);
            for (int b = 0; b < batch.batch_size; ++b)
                for (int t = 0; t < batch.tgt_lengths[b]; ++t) {
                    int32_t want = batch.tgt_out[b * batch.tgt_len + t];
                    correct += t < int(hyps[b].tokens.size()) && hyps[b].tokens[t] == want;
                    ++total;
                }
        }
        double accuracy = double(correct) / double(total);
        INFO("token accuracy " << accuracy);
        CHECK(accuracy > 0.95);
        check_saliency_peaks(model, attention, data);
    }
}
