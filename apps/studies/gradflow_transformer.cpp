// Gradient flow through a Transformer (`seqgrad gradflow --attention transformer`): see
// measure_transformer_flow in apps/studies/gradflow.h.
//
// The teacher-forced pass of Transformer::forward_loss, written out here so that the encoder's
// input x and its output, the memory, are tensors the study can read gradients from:
//   x      = √E · source_embedding(ids) + P[0..S)              [B,S,E]  (the analogue of e_t)
//   memory = transformer.encoder(x, source padding)             [B,S,E]  (the analogue of h_t)
//   h      = transformer.decoder(y, memory, causal, padding)    [B,T,E]
//   loss   = mean cross-entropy of out(h) over the real target tokens
// This is the padded pass; its loss is the model's own (forward_loss, on packed sentences) to
// rounding: tests/unit/test_gradflow.cpp checks it to 1e-12.
#include <cmath>

#include "apps/studies/gradflow.h"
#include "seqgrad/autograd/fused_loss.h"
#include "seqgrad/autograd/ops.h"
#include "seqgrad/autograd/tape_scope.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/layers/attention.h"

namespace seqgrad {

TransformerPass transformer_pass(const Transformer& model, const Batch& batch) {
    const int64_t B = batch.batch_size, S = batch.src_len, T = batch.tgt_len;
    const Tensor source_padding = padding_mask(batch.src_lengths, S);
    TransformerPass pass;
    {
        TapeScope scope("encoder");  // the explorer's tape: the source side
        pass.embedded = model.source_embedding->forward(batch.src_ids, {B, S});
        pass.x = model.embed(pass.embedded, model.source_positions, 0);
        pass.memory = model.transformer.encoder.forward(pass.x, source_padding);
    }
    Tensor decoded;
    {
        TapeScope scope("decoder");
        decoded = model.transformer.decoder.forward(
            model.embed(model.target_embedding->forward(batch.tgt_in, {B, T}),
                        model.target_positions, 0),
            pass.memory, padding_mask(batch.tgt_lengths, T), source_padding);
    }
    TapeScope scope("output");
    pass.loss = model.padded_loss(decoded, batch).loss;
    return pass;
}

FlowMeasurement measure_transformer_flow(Transformer& model, const Batch& batch) {
    const int64_t B = batch.batch_size, S = batch.src_len, E = model.config().d_model;
    model.zero_grad();
    TransformerPass pass = transformer_pass(model, batch);
    Tensor &x = pass.x, &memory = pass.memory, &loss = pass.loss;
    x.retain_grad();
    memory.retain_grad();
    loss.backward();

    FlowMeasurement m;
    m.batch = B;
    m.length = S;
    m.loss = double(loss.item());
    m.hidden.assign(size_t(S), 0);
    m.embedding.assign(size_t(S), 0);
    // no recurrence: every bit of the memory's gradient arrives through cross-attention, and
    // the split of the RNN study does not apply (NaN: "" in the CSV, no curve in the plot)
    m.direct.assign(size_t(S), NAN);
    m.recurrent.assign(size_t(S), NAN);
    m.rows.assign(size_t(S), 0);
    m.embedding_per_row.assign(size_t(B * S), 0);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < S; ++t) {
            const double e = std::sqrt(row_norm_sq(x.grad_data(), (b * S + t) * E, E));
            m.embedding_per_row[size_t(b * S + t)] = e;
            if (t >= batch.src_lengths[size_t(b)]) continue;
            m.hidden[size_t(t)] += std::sqrt(row_norm_sq(memory.grad_data(), (b * S + t) * E, E));
            m.embedding[size_t(t)] += e;
            m.rows[size_t(t)]++;
        }
    for (int64_t t = 0; t < S; ++t)
        if (m.rows[size_t(t)] > 0) {
            m.hidden[size_t(t)] /= m.rows[size_t(t)];
            m.embedding[size_t(t)] /= m.rows[size_t(t)];
        }
    m.groups = group_grad_norms(model);
    return m;
}

}  // namespace seqgrad
