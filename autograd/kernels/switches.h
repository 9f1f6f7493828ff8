// Switches: every environment variable seqgrad reads is read here, once, and nowhere else.
//
//   SEQGRAD_DISABLE=name,name,...   turns optimisations off, to measure what each one buys
//                                   (docs/performance.md, bench/ladder.sh). Names:
//     fused_gru       the GRU layers run the composed cell (gru_cell_composed) per step
//     fused_lstm      the LSTM layers run the composed cell (lstm_cell_composed) per step
//     fused_rnn       the RNN layers run the composed cell (rnn_cell_composed) per step
//     fused_attention attention runs the composed scores and context (batched matmuls), the
//                     RNN models' and the Transformer's scaled dot-product attention alike
//                     (these four are layer options: the code that builds a model reads them
//                     once and passes them to the layers' constructors; no layer reads them)
//     shared_steps    a recurrence's weight gradient is one product per step (fast kernels)
//     packed          thin products do not use weights packed once per sequence (fast kernels)
//     small_m         products of <= 8 rows go to BLAS, not the small-M kernel (fast kernels)
//     buffer_pool     every buffer comes from the system allocator
//   SEQGRAD_NO_PACKED=1      the same as SEQGRAD_DISABLE=packed (kept for old scripts)
//   SEQGRAD_GEMM_PROFILE=1   times every product by shape (fast kernels) and prints a table to
//                            stderr at exit
//
// An unknown name in SEQGRAD_DISABLE is an error naming it and the known names.
#pragma once

namespace seqgrad {

struct Switches {
    bool fused_gru = true;
    bool fused_lstm = true;
    bool fused_rnn = true;
    bool fused_attention = true;
    bool shared_steps = true;
    bool packed = true;
    bool small_m = true;
    bool buffer_pool = true;
    bool gemm_profile = false;
};

// The switches of this process: read from the environment at the first call, which also hands
// the buffer pool its setting (buffer_pool_set_enabled). Throws seqgrad::Error on an unknown name
// in SEQGRAD_DISABLE.
const Switches& switches();

// The switches a SEQGRAD_DISABLE value turns off (nullptr: none). Throws seqgrad::Error naming an
// unknown name and the known ones.
Switches parse_disabled(const char* comma_separated_names);
// Replaces the process's switches (for tests that compare the variants). Not to be called while
// other threads run ops.
void set_switches(const Switches& s);

}  // namespace seqgrad
