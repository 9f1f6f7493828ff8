#!/usr/bin/python3
"""PyTorch baseline for seqgrad's benchmarks (bench/compare.sh).

Run with Debian's PyTorch (`apt-get install -y python3-torch`, /usr/bin/python3).
PyTorch is used ONLY here: never by the build, the tests or CI.

For N threads run it with, in the environment,
    OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=N OMP_WAIT_POLICY=PASSIVE
(bench/compare.sh does that). torch.set_num_threads(N) alone does not reach Debian's
OpenBLAS, and spinning OpenMP threads make 2 threads slower than 1 on a 2-core machine.

CLI
    torch_baseline.py --bench train  --config a|b|c|d|e [--cell gru|lstm] --threads N [--seconds S]
    torch_baseline.py --bench decode [--mode greedy|beam5] [--batch 1|32] --threads N [--seconds S]
    torch_baseline.py --bench check  [--config X]      (correctness smoke check, see below)
Other options: --seed (default 0), --warmup-seconds (3), --warmup-steps (10).

Output: ONE JSON line per measurement on stdout (anything else goes to stderr):
    {"impl":"torch","bench":"train","config":"a","threads":1,"ms_per_step":..,
     "tokens_per_s":..,"gflops":..,"steps":..,"peak_rss_mb":..,  + informative extra keys}
    {"impl":"torch","bench":"decode","mode":"greedy"|"beam5","batch":1|32,"threads":N,
     "sentences_per_s":..,"peak_rss_mb":..,  + informative extra keys}

=====================================================================================
EXACT DEFINITION (seqgrad's C++ benchmark implements the same model, data and step)
=====================================================================================
Data (synthetic)
  Ids PAD=0, SOS=1, EOS=2, UNK=3. Source vocab Vs, target vocab Vt.
  A sentence of length L (uniform in 5..12, EOS included) = L-1 ids uniform in [4, V)
  followed by EOS. Source and target lengths are drawn independently.
  A batch of B pairs is padded (PAD) to that batch's own max source / target length.
  Decoder input  = [SOS, y_1 .. y_{L-1}]       (teacher forcing, length L)
  Decoder gold   = [y_1 .. y_{L-1}, EOS]       (length L; PAD beyond)
  A fixed pool of 16 batches is generated from the seed and used in rotation.
  Target tokens per step = number of non-PAD gold tokens (EOS included).

Model (all layers with PyTorch's default initialisation, torch.manual_seed(seed))
  src_emb = Embedding(Vs, E, padding_idx=0);  tgt_emb = Embedding(Vt, E, padding_idx=0)
  encoder = GRU(E, H), 1 layer, unidirectional, fed with pack_padded_sequence(src lengths)
            -> enc [B,S,H] (zeros at padded positions), h_0 of decoder = encoder final
            state = each sequence's state at its own last token.
  mask[b,s] = (s >= src_len[b]); masked scores are set to -inf before softmax.
  out = Linear(H, Vt) (with bias).
  Bahdanau (configs a,b,c,e; attention dim A):
    W_k = Linear(H, A, bias)   keys = W_k(enc)  [B,S,A]  computed once per batch
    W_q = Linear(H, A, no bias); v = Linear(A, 1, no bias)
    cell = GRUCell(E + H, H)
    for t: score = v(tanh(W_q(h_{t-1})[:,None,:] + keys)) [B,S]; a = softmax(mask(score))
           c = sum_s a[b,s] enc[b,s];  h_t = cell([emb_t ; c], h_{t-1});  state_t = h_t
  Luong general (config d):
    W_a = Linear(H, H, no bias)  keysW = W_a(enc) [B,S,H] computed once per batch
    W_c = Linear(2H, H, no bias); cell = GRUCell(E, H)  (no input feeding)
    for t: h_t = cell(emb_t, h_{t-1}); score[b,s] = h_t . keysW[b,s]; a = softmax(mask(score))
           c = sum_s a[b,s] enc[b,s];  state_t = tanh(W_c([c ; h_t]))
  --cell lstm (train and check only): encoder = LSTM(E, H) (packed the same way), decoder
  cell = LSTMCell(in, H) with the same inputs; the decoder starts from the encoder's final
  (h, c) of each sequence; everything else as above. seqgrad's side: model.cell = "lstm".
  logits = out(stack_t(state_t)) : ONE Linear over [T,B,H] after the recurrence
  loss = CrossEntropyLoss(ignore_index=0)(logits, gold) = mean over non-PAD gold tokens.

Training step
  optimizer.zero_grad(set_to_none=True); loss = forward(batch); loss.backward();
  clip_grad_norm_(all parameters, 1.0); Adam(lr=1e-3, betas=(0.9,0.999), eps=1e-8).step()
  (PyTorch's fastest CPU forms: set_to_none grads, foreach Adam; context and Luong scores
  with bmm — elementwise mul+sum was measured and is not faster)

Configs
  a: bahdanau E=H=A=256 B=32 Vs/Vt=4000/6000     b: as a, B=64
  c: bahdanau E=H=A=512 B=64 Vs/Vt=4000/6000     d: luong general E=H=256 B=32 4000/6000
  e: tiny bahdanau E=H=A=64 B=16 Vs/Vt=50/50

Measurement (train)
  Warm-up: steps until warmup-seconds (3 s) have passed or warmup-steps (10) are done,
  whichever comes first (at least 2 steps). Then steps are timed one by one
  (time.perf_counter) until >= --seconds (default 10) have passed and at least 5 steps.
  ms_per_step = median step time; tokens_per_s = (mean target tokens per batch over the
  pool) / median step time; peak_rss_mb = ru_maxrss of this process / 1024.
  gflops = useful GFLOP/s = (mean useful FLOPs per batch over the pool) / median step time,
  the FLOPs of the non-pad work counted exactly as seqgrad's bench::training_flops
  (bench/synthetic.h): forward matrix products per real source / target token, x3 for
  forward + backward, elementwise work left out. Informative only: it does not change
  what is computed or timed.

Decode (config (a)-sized Bahdanau model, Vs/Vt 4000/6000, E=H=A=256, random seeded
weights, torch.no_grad(); sources from the same distribution, pool of 64 sentences)
  Each decoder step = the Bahdanau step above + log_softmax(out(h_t)).
  greedy: next token = argmax; a sentence stops at EOS or after max_len=20 generated
          tokens. batch 1 = sentence by sentence; batch 32 = 32 sentences at once, the
          batch runs until every sentence has emitted EOS or 20 steps (no shrinking).
  beam5:  batch 1 only; all live beams of a sentence run as one GRU batch (the encoder
          output is expanded to the live beam count). Start with one hypothesis [SOS],
          score 0. Each step: candidates = score + log_softmax over Vt for every live
          beam; take the best 2k (k=5) candidates by raw score; those ending in EOS go to
          the finished list with normalised score raw/len^0.6 (len = generated tokens
          incl. EOS), the others fill the live beams up to k. Stop when no live beam is
          left, when the best finished normalised score >= best live raw / 20^0.6 (no
          live beam can beat it: raw scores only decrease), or after 20 steps, when the
          live beams are finished with their normalised score. Result = best finished.
  With random weights EOS is almost never chosen, so nearly every sentence runs the full
  20 steps; "mean_len" reports the mean output length so both engines can be checked to
  do the same amount of work.
  sentences_per_s = sentences decoded / elapsed time over >= --seconds after warm-up.
=====================================================================================
"""

import argparse
import json
import math
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

PAD, SOS, EOS, UNK = 0, 1, 2, 3
FIRST_REAL = 4
MIN_LEN, MAX_LEN = 5, 12
POOL_BATCHES = 16

CONFIGS = {
    "a": dict(attn="bahdanau", E=256, H=256, A=256, B=32, Vs=4000, Vt=6000),
    "b": dict(attn="bahdanau", E=256, H=256, A=256, B=64, Vs=4000, Vt=6000),
    "c": dict(attn="bahdanau", E=512, H=512, A=512, B=64, Vs=4000, Vt=6000),
    "d": dict(attn="luong", E=256, H=256, A=256, B=32, Vs=4000, Vt=6000),
    "e": dict(attn="bahdanau", E=64, H=64, A=64, B=16, Vs=50, Vt=50),
}

DECODE_MAX_LEN = 20
BEAM = 5
ALPHA = 0.6


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KB on Linux


# ----------------------------------------------------------------------------- data

def random_sentence(gen, vocab):
    """L-1 ids uniform in [4, vocab) followed by EOS, L uniform in 5..12."""
    L = int(torch.randint(MIN_LEN, MAX_LEN + 1, (1,), generator=gen))
    body = torch.randint(FIRST_REAL, vocab, (L - 1,), generator=gen)
    return torch.cat([body, torch.tensor([EOS])])


def pad_batch(seqs):
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    out = torch.full((len(seqs), int(lengths.max())), PAD, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = s
    return out, lengths


def make_batch(gen, B, Vs, Vt):
    src, tgt = [], []
    for _ in range(B):
        src.append(random_sentence(gen, Vs))
        tgt.append(random_sentence(gen, Vt))
    src_pad, src_len = pad_batch(src)
    gold, tgt_len = pad_batch(tgt)  # [B,T]: y_1..y_{L-1}, EOS, PAD...
    dec_in = torch.full_like(gold, PAD)  # [B,T]: SOS, y_1..y_{L-1}, PAD...
    for i, L in enumerate(tgt_len.tolist()):
        dec_in[i, 0] = SOS
        dec_in[i, 1:L] = gold[i, : L - 1]
    n_tokens = int((gold != PAD).sum())
    return dict(src=src_pad, src_len=src_len, dec_in=dec_in, gold=gold, n_tokens=n_tokens)


def useful_flops(cfg, batch, cell="gru"):
    """FLOPs of the non-pad work of one training step, as bench::training_flops counts them."""
    E, H, A, V = cfg["E"], cfg["H"], cfg["A"], cfg["Vt"]
    G = 4 if cell == "lstm" else 3  # gates
    fwd = 0.0
    for S, T in zip(batch["src_len"].tolist(), (batch["gold"] != PAD).sum(1).tolist()):
        fwd += S * (2 * E * G * H + 2 * H * G * H)  # encoder GRU / LSTM
        if cfg["attn"] == "bahdanau":
            fwd += S * 2 * H * A  # keys projected once
            fwd += T * (2 * H * A + 2 * S * A + 2 * S * H)  # query, scores, context
            fwd += T * (2 * (E + H) * G * H + 2 * H * G * H)  # decoder cell
        else:
            fwd += S * 2 * H * H  # W_a keys once
            fwd += T * (2 * S * H + 2 * S * H + 2 * 2 * H * H)  # scores, context, W_c
            fwd += T * (2 * E * G * H + 2 * H * G * H)
        fwd += T * 2 * H * V  # output projection
    return 3 * fwd


def make_pool(seed, B, Vs, Vt, n=POOL_BATCHES):
    gen = torch.Generator().manual_seed(seed)
    return [make_batch(gen, B, Vs, Vt) for _ in range(n)]


# ----------------------------------------------------------------------------- model

class Seq2Seq(nn.Module):
    def __init__(self, attn, E, H, A, Vs, Vt, cell="gru"):
        super().__init__()
        self.attn, self.H, self.Vt, self.lstm = attn, H, Vt, cell == "lstm"
        Layer, Cell = (nn.LSTM, nn.LSTMCell) if self.lstm else (nn.GRU, nn.GRUCell)
        self.src_emb = nn.Embedding(Vs, E, padding_idx=PAD)
        self.encoder = Layer(E, H, num_layers=1, batch_first=True)
        self.tgt_emb = nn.Embedding(Vt, E, padding_idx=PAD)
        if attn == "bahdanau":
            self.W_k = nn.Linear(H, A, bias=True)
            self.W_q = nn.Linear(H, A, bias=False)
            self.v = nn.Linear(A, 1, bias=False)
            self.cell = Cell(E + H, H)
        elif attn == "luong":
            self.W_a = nn.Linear(H, H, bias=False)
            self.W_c = nn.Linear(2 * H, H, bias=False)
            self.cell = Cell(E, H)
        else:
            raise ValueError(attn)
        self.out = nn.Linear(H, Vt)

    def encode(self, src, src_len):
        """src [B,S] -> enc [B,S,H], h [B,H] (LSTM: the pair (h, c)), mask [B,S] (True =
        padded), keys."""
        S = src.shape[1]
        x = self.src_emb(src)
        packed = pack_padded_sequence(x, src_len, batch_first=True, enforce_sorted=False)
        out, final = self.encoder(packed)
        enc, _ = pad_packed_sequence(out, batch_first=True, total_length=S)
        mask = torch.arange(S)[None, :] >= src_len[:, None]
        keys = self.W_k(enc) if self.attn == "bahdanau" else self.W_a(enc)
        h = (final[0][0], final[1][0]) if self.lstm else final[0]
        return enc, h, mask, keys

    def step(self, emb_t, state, enc, mask, keys):
        """One decoder step: returns (new state, state_t fed to the output projection); the
        state is h, or (h, c) for an LSTM."""
        h = state[0] if self.lstm else state
        if self.attn == "bahdanau":
            e = self.v(torch.tanh(self.W_q(h).unsqueeze(1) + keys)).squeeze(2)  # [B,S]
            a = torch.softmax(e.masked_fill(mask, float("-inf")), dim=1)
            c = torch.bmm(a.unsqueeze(1), enc).squeeze(1)  # [B,H]
            state = self.cell(torch.cat([emb_t, c], dim=1), state)
            h = state[0] if self.lstm else state
            return state, h
        state = self.cell(emb_t, state)
        h = state[0] if self.lstm else state
        e = torch.bmm(keys, h.unsqueeze(2)).squeeze(2)  # [B,S]
        a = torch.softmax(e.masked_fill(mask, float("-inf")), dim=1)
        c = torch.bmm(a.unsqueeze(1), enc).squeeze(1)
        att = torch.tanh(self.W_c(torch.cat([c, h], dim=1)))
        return state, att

    def forward(self, src, src_len, dec_in):
        enc, h, mask, keys = self.encode(src, src_len)
        emb = self.tgt_emb(dec_in)  # [B,T,E]
        states = []
        for t in range(dec_in.shape[1]):
            h, s = self.step(emb[:, t], h, enc, mask, keys)
            states.append(s)
        return self.out(torch.stack(states, dim=0))  # [T,B,Vt], one Linear


def loss_fn(model, batch):
    logits = model(batch["src"], batch["src_len"], batch["dec_in"])  # [T,B,V]
    gold = batch["gold"].t().reshape(-1)  # [T*B], matches logits' [T,B] order
    return F.cross_entropy(logits.reshape(-1, model.Vt), gold, ignore_index=PAD)


def build(cfg, seed, cell="gru"):
    torch.manual_seed(seed)
    model = Seq2Seq(cfg["attn"], cfg["E"], cfg["H"], cfg["A"], cfg["Vs"], cfg["Vt"], cell)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)  # foreach: a bit faster
    return model, opt


def train_step(model, opt, params, batch):
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model, batch)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
    return loss


# ----------------------------------------------------------------------------- benches

def warmup(fn, args):
    t0 = time.perf_counter()
    n = 0
    while n < 2 or (n < args.warmup_steps and time.perf_counter() - t0 < args.warmup_seconds):
        fn(n)
        n += 1
    return n


def timed_train(args, step, pool, cell, params, tokens_per_step, flops_per_step):
    """Warm up, then time step(batch) over the pool for >= args.seconds and >= 5 steps; emits
    the medians (wall and CPU time per step) as one JSON line. Shared by torch_tutorials.py."""
    n_warm = warmup(lambda i: step(pool[i % len(pool)]), args)
    times, cpu, i = [], [], n_warm
    t_start = time.perf_counter()
    while True:
        t0, c0 = time.perf_counter(), time.process_time()
        step(pool[i % len(pool)])
        t1 = time.perf_counter()
        times.append(t1 - t0)
        cpu.append(time.process_time() - c0)
        i += 1
        if t1 - t_start >= args.seconds and len(times) >= 5:
            break
    med = statistics.median(times)
    emit(dict(impl="torch", bench="train", config=args.config, cell=cell, threads=args.threads,
              ms_per_step=round(med * 1e3, 4),
              tokens_per_s=round(tokens_per_step / med, 2),
              gflops=round(flops_per_step / med / 1e9, 4),
              gflop_per_step=round(flops_per_step / 1e9, 6),
              parameters=sum(p.numel() for p in params),
              steps=len(times), peak_rss_mb=round(peak_rss_mb(), 1),
              ms_per_step_mean=round(statistics.mean(times) * 1e3, 4),
              cpu_ms_per_step=round(statistics.median(cpu) * 1e3, 4),
              tokens_per_step=tokens_per_step, warmup_steps=n_warm,
              torch_version=torch.__version__))


def bench_train(args):
    cfg = CONFIGS[args.config]
    model, opt = build(cfg, args.seed, args.cell)
    params = list(model.parameters())
    pool = make_pool(args.seed + 1, cfg["B"], cfg["Vs"], cfg["Vt"])
    model.train()
    timed_train(args, lambda batch: train_step(model, opt, params, batch), pool, args.cell, params,
                statistics.mean(b["n_tokens"] for b in pool),
                statistics.mean(useful_flops(cfg, b, args.cell) for b in pool))


def decoder_logp(model, tok, h, enc, mask, keys):
    h, s = model.step(model.tgt_emb(tok), h, enc, mask, keys)
    return h, torch.log_softmax(model.out(s), dim=1)


def greedy(model, src, src_len):
    """src [B,S] -> list of B output token lists (EOS included when emitted)."""
    enc, h, mask, keys = model.encode(src, src_len)
    B = src.shape[0]
    tok = torch.full((B,), SOS, dtype=torch.long)
    outs = []
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(DECODE_MAX_LEN):
        h, logp = decoder_logp(model, tok, h, enc, mask, keys)
        tok = logp.argmax(dim=1)
        outs.append(tok)
        done = done | (tok == EOS)
        if bool(done.all()):
            break
    outs = torch.stack(outs, dim=1).tolist()
    res = []
    for row in outs:
        res.append(row[: row.index(EOS) + 1] if EOS in row else row)
    return res


def beam_search(model, src, src_len, k=BEAM, alpha=ALPHA, max_len=DECODE_MAX_LEN):
    """src [1,S] -> best hypothesis (list of tokens), see the header for the rules."""
    enc1, h, mask1, keys1 = model.encode(src, src_len)
    scores = torch.zeros(1)
    hyps = [[]]
    tok = torch.full((1,), SOS, dtype=torch.long)
    finished = []  # (normalised score, tokens)
    best_possible_div = max_len ** alpha
    for t in range(1, max_len + 1):
        n = tok.shape[0]
        enc, mask, keys = (enc1.expand(n, -1, -1), mask1.expand(n, -1), keys1.expand(n, -1, -1))
        h, logp = decoder_logp(model, tok, h, enc, mask, keys)
        cand = (scores[:, None] + logp).reshape(-1)
        top_s, top_i = cand.topk(min(2 * k, cand.numel()))
        beam_idx = torch.div(top_i, model.Vt, rounding_mode="floor")
        tok_idx = top_i % model.Vt
        keep_b, keep_t, keep_s = [], [], []
        for s, b, w in zip(top_s.tolist(), beam_idx.tolist(), tok_idx.tolist()):
            if w == EOS:
                finished.append((s / (t ** alpha), hyps[b] + [w]))
            elif len(keep_b) < k:
                keep_b.append(b)
                keep_t.append(w)
                keep_s.append(s)
        if not keep_b:
            break
        hyps = [hyps[b] + [w] for b, w in zip(keep_b, keep_t)]
        sel = torch.tensor(keep_b)
        h = h.index_select(0, sel)
        tok = torch.tensor(keep_t)
        scores = torch.tensor(keep_s)
        if t == max_len:
            finished.extend((s / (t ** alpha), hy) for s, hy in zip(keep_s, hyps))
            break
        if finished and max(f[0] for f in finished) >= max(keep_s) / best_possible_div:
            break
    return max(finished, key=lambda f: f[0])[1]


def bench_decode_one(args, model, sources, mode, batch):
    if mode == "beam5" and batch != 1:
        raise SystemExit("beam5 is measured at batch 1 only")

    def run(i):
        if batch == 1:
            s = sources[i % len(sources)]
            src, ln = s[None, :], torch.tensor([len(s)])
            outs = [beam_search(model, src, ln)] if mode == "beam5" else greedy(model, src, ln)
        else:
            j = (i * batch) % len(sources)
            chunk = [sources[(j + r) % len(sources)] for r in range(batch)]
            src, ln = pad_batch(chunk)
            outs = greedy(model, src, ln)
        return outs

    warmup(run, args)
    t_start = time.perf_counter()
    n_sent, n_tok, i = 0, 0, 0
    while True:
        outs = run(i)
        i += 1
        n_sent += len(outs)
        n_tok += sum(len(o) for o in outs)
        el = time.perf_counter() - t_start
        if el >= args.seconds and i >= 3:
            break
    emit(dict(impl="torch", bench="decode", mode=mode, batch=batch, threads=args.threads,
              sentences_per_s=round(n_sent / el, 3), peak_rss_mb=round(peak_rss_mb(), 1),
              sentences=n_sent, mean_len=round(n_tok / n_sent, 3),
              torch_version=torch.__version__))


def bench_decode(args):
    cfg = CONFIGS["a"]
    model, _ = build(cfg, args.seed)
    model.eval()
    gen = torch.Generator().manual_seed(args.seed + 2)
    sources = [random_sentence(gen, cfg["Vs"]) for _ in range(64)]
    if args.mode:
        runs = [(args.mode, args.batch or 1)]
    else:
        runs = [("greedy", 1), ("beam5", 1), ("greedy", 32)]
    with torch.no_grad():
        for mode, batch in runs:
            bench_decode_one(args, model, sources, mode, batch)


def bench_check(args):
    """Light correctness check: init loss ~ ln(Vt); loss falls over 50 steps on one batch;
    greedy == beam search of width 1; masking gives padded source positions zero weight;
    packed encoder final state == state at each sequence's own last token."""
    cfg = CONFIGS[args.config]
    model, opt = build(cfg, args.seed, args.cell)
    params = list(model.parameters())
    batch = make_pool(args.seed + 1, cfg["B"], cfg["Vs"], cfg["Vt"], n=1)[0]
    losses = [float(train_step(model, opt, params, batch)) for _ in range(50)]
    ok_init = abs(losses[0] - math.log(cfg["Vt"])) < 0.1 * math.log(cfg["Vt"])
    ok_fall = losses[-1] < 0.7 * losses[0]
    with torch.no_grad():
        model.eval()
        enc, h, mask, keys = model.encode(batch["src"], batch["src_len"])
        # final state of each sequence equals the unpacked run's state at its last token
        x = model.src_emb(batch["src"])
        full, _ = model.encoder(x)
        last = full[torch.arange(len(batch["src_len"])), batch["src_len"] - 1]
        if model.lstm:
            h = h[0]
        ok_pack = torch.allclose(last, h, atol=1e-5)
        ok_padzero = bool((enc[mask] == 0).all())
        # attention weights on padded positions are exactly zero (Bahdanau path)
        ok_mask = True
        if model.attn == "bahdanau" and not model.lstm:  # greedy/beam search: GRU only
            e = model.v(torch.tanh(model.W_q(h).unsqueeze(1) + keys)).squeeze(2)
            a = torch.softmax(e.masked_fill(mask, float("-inf")), dim=1)
            ok_mask = bool((a[mask] == 0).all()) and torch.allclose(a.sum(1), torch.ones(a.shape[0]))
            # beam width 1 == greedy on a few sentences
            for b in range(4):
                L = int(batch["src_len"][b])
                src, ln = batch["src"][b : b + 1, :L], batch["src_len"][b : b + 1]
                g = greedy(model, src, ln)[0]
                bs = beam_search(model, src, ln, k=1)
                # with k=1 the live beam follows the argmax path until greedy picks EOS;
                # after that, length normalisation may let beam search go on (by design)
                ok_mask = ok_mask and (g == bs or EOS in g)
    emit(dict(impl="torch", bench="check", config=args.config, loss_init=round(losses[0], 4),
              ln_vt=round(math.log(cfg["Vt"]), 4), loss_50=round(losses[-1], 4),
              losses_every_10=[round(l, 3) for l in losses[::10]],
              ok_init=ok_init, ok_fall=ok_fall, ok_pack=bool(ok_pack),
              ok_pad_zero=ok_padzero, ok_mask_and_beam1=bool(ok_mask)))
    if not (ok_init and ok_fall and ok_pack and ok_padzero and ok_mask):
        sys.exit(1)


def emit(d):
    print(json.dumps(d, separators=(",", ":")), flush=True)


def check_env(n):
    want = {"OMP_NUM_THREADS": str(n), "OPENBLAS_NUM_THREADS": str(n), "OMP_WAIT_POLICY": "PASSIVE"}
    for k, v in want.items():
        got = os.environ.get(k)
        if got is None or got.upper() != v:
            log(f"warning: {k}={got!r} in the environment, expected {v!r}: run with "
                f"OMP_NUM_THREADS={n} OPENBLAS_NUM_THREADS={n} OMP_WAIT_POLICY=PASSIVE "
                "(torch.set_num_threads alone does not reach OpenBLAS)")


def main():
    p = argparse.ArgumentParser(description="PyTorch baseline for seqgrad's benchmarks")
    p.add_argument("--bench", choices=["train", "decode", "check"], default="train")
    p.add_argument("--config", choices=sorted(CONFIGS), default="a")
    p.add_argument("--cell", choices=["gru", "lstm"], default="gru",
                   help="train/check: the encoder's and decoder's recurrent cell")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--mode", choices=["greedy", "beam5"], default=None,
                   help="decode: one mode only (default: greedy b1, beam5 b1, greedy b32)")
    p.add_argument("--batch", type=int, default=None, help="decode: batch size (1 or 32)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--warmup-seconds", type=float, default=3.0)
    p.add_argument("--warmup-steps", type=int, default=10)
    args = p.parse_args()
    if args.cell != "gru" and args.bench == "decode":
        p.error("--cell lstm: the decode benchmark is GRU only")

    check_env(args.threads)
    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    {"train": bench_train, "decode": bench_decode, "check": bench_check}[args.bench](args)


if __name__ == "__main__":
    main()
