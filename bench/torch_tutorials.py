#!/usr/bin/python3
"""PyTorch baselines of the two tutorial models for seqgrad's benchmarks (bench/compare.sh).

Run with Debian's PyTorch (/usr/bin/python3, python3-torch). PyTorch is used ONLY here: never
by the build, the tests or CI. Run with OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=N
OMP_WAIT_POLICY=PASSIVE in the environment (bench/compare.sh does; see torch_baseline.py).

CLI
    torch_tutorials.py --bench train  --config t|g --threads N [--seconds S]
    torch_tutorials.py --bench decode --config t --mode greedy|beam5 --batch B --threads N
    torch_tutorials.py --bench check  --config t|g   (parameter count, the loss falls)
Output: ONE JSON line per measurement, with the keys of torch_baseline.py's.

=====================================================================================
EXACT DEFINITION (seqgrad's bench/synthetic.h configs t and g are the same model, data, step)
=====================================================================================
Data: as torch_baseline.py (ids PAD=0, SOS=1, EOS=2; a sentence = L-1 ids uniform in [4, V)
then EOS; source and target lengths independent; 16 batches in rotation), with L uniform in
  t: 5..12                g: 5..19 (mean 12, EOS included; Multi30k's sentences average
                             about 12 tokens)

Config t: the model of PyTorch's tutorial "Language Translation with nn.Transformer"
(Seq2SeqTransformer), batch_first, at the shape of config (a):
  src_tok_emb = Embedding(4000, 256), tgt_tok_emb = Embedding(6000, 256), each times sqrt(256),
  plus the sinusoidal positional encoding; transformer = nn.Transformer(d_model=256, nhead=8,
  num_encoder_layers=3, num_decoder_layers=3, dim_feedforward=512, dropout=0.0,
  batch_first=True); generator = Linear(256, 6000); every matrix xavier_uniform_ (as the
  tutorial). Masks: causal tgt_mask, src/tgt/memory key padding masks. batch 32.
  logits = generator(decoder output) over every position [B,T,V] (the tutorial's form);
  loss = CrossEntropyLoss(ignore_index=PAD). Dropout 0 here, as in every config of the
  benchmarks (nn.Transformer still calls its dropout modules, with p = 0).
  Decoding, as the tutorial's greedy_decode: encode once, then at each step re-run the
  decoder on the whole prefix [SOS, y_1 .. y_t] (no cache) and read the last position.
  beam5 (batch 1): the rules of torch_baseline.py's beam search, the live beams' prefixes
  re-run as one batch at each step. greedy at batch 32: the batch runs until every sentence
  has emitted EOS or 20 steps. Max length 20.

Config g: the model of bentrevett/pytorch-seq2seq notebook 3 (Bahdanau et al. 2015), 20,518,405
parameters: encoder Embedding(7853, 256), GRU(256, 512, bidirectional), fc = Linear(1024, 512),
h_0 of the decoder = tanh(fc([h_fwd; h_bwd])); attention attn = Linear(1024 + 512, 512),
v = Linear(512, 1, bias=False), energy = tanh(attn([h_{t-1}; enc_s])); decoder
Embedding(5893, 256), GRU(256 + 1024, 512) fed [emb; c_t], fc_out = Linear(512 + 1024 + 256,
5893) reading [h_t; c_t; emb] (deep output). batch 128, dropout 0, teacher forcing 1.
  PyTorch's fastest forms of the same maths: the encoder packed (pack_padded_sequence) and
  padded source positions masked (as notebook 4; notebook 3 attends to padding), attn's
  encoder half applied once per batch (attn.weight split in two columns blocks: the same
  parameters), the decoder's GRU as a GRUCell (the same parameter count as the one-layer GRU),
  fc_out once over [T,B,*] after the recurrence instead of once per step.

Training step: zero_grad(set_to_none) ; loss.backward() ; clip_grad_norm_(1.0) ; Adam(lr 1e-3,
foreach). Timing: as torch_baseline.py.
=====================================================================================
"""

import argparse
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from torch_baseline import (EOS, PAD, SOS, FIRST_REAL, check_env, emit, log, pad_batch,
                            peak_rss_mb, timed_train, warmup)

CONFIGS = {
    "t": dict(kind="transformer", E=256, F=512, L=3, heads=8, B=32, Vs=4000, Vt=6000,
              min_len=5, max_len=12),
    "g": dict(kind="gru", E=256, He=512, H=512, A=512, B=128, Vs=7853, Vt=5893,
              min_len=5, max_len=19),
}
TUTORIAL_GRU_PARAMETERS = 20_518_405
POOL_BATCHES = 16
DECODE_MAX_LEN = 20
BEAM = 5
ALPHA = 0.6


# ----------------------------------------------------------------------------- data

def random_sentence(gen, vocab, lo, hi):
    L = int(torch.randint(lo, hi + 1, (1,), generator=gen))
    body = torch.randint(FIRST_REAL, vocab, (L - 1,), generator=gen)
    return torch.cat([body, torch.tensor([EOS])])


def make_batch(gen, cfg):
    lo, hi = cfg["min_len"], cfg["max_len"]
    src = [random_sentence(gen, cfg["Vs"], lo, hi) for _ in range(cfg["B"])]
    tgt = [random_sentence(gen, cfg["Vt"], lo, hi) for _ in range(cfg["B"])]
    src_pad, src_len = pad_batch(src)
    gold, tgt_len = pad_batch(tgt)
    dec_in = torch.full_like(gold, PAD)
    for i, L in enumerate(tgt_len.tolist()):
        dec_in[i, 0] = SOS
        dec_in[i, 1:L] = gold[i, : L - 1]
    return dict(src=src_pad, src_len=src_len, tgt_len=tgt_len, dec_in=dec_in, gold=gold,
                n_tokens=int((gold != PAD).sum()))


def make_pool(seed, cfg, n=POOL_BATCHES):
    gen = torch.Generator().manual_seed(seed)
    return [make_batch(gen, cfg) for _ in range(n)]


def useful_flops(cfg, batch):
    """FLOPs of the non-pad work of one training step, as bench/synthetic.h counts them."""
    fwd = 0.0
    for S, T in zip(batch["src_len"].tolist(), batch["tgt_len"].tolist()):
        if cfg["kind"] == "transformer":
            E, Fs, L, V = cfg["E"], cfg["F"], cfg["L"], cfg["Vt"]
            fwd += L * S * (2 * E * 3 * E + 2 * E * E + 4 * S * E + 4 * E * Fs)
            fwd += L * (T * (2 * E * 3 * E + 2 * E * E) + 4 * E * T * (T + 1) / 2)
            fwd += L * (T * (2 * E * E + 2 * E * E + 4 * S * E) + S * 2 * E * 2 * E)
            fwd += L * T * 4 * E * Fs
            fwd += T * 2 * E * V
        else:
            E, He, H, A, V, G = cfg["E"], cfg["He"], cfg["H"], cfg["A"], cfg["Vt"], 3
            K = 2 * He
            fwd += 2 * S * (2 * E * G * He + 2 * He * G * He)
            fwd += 2 * K * H
            fwd += S * 2 * K * A
            fwd += T * (2 * H * A + 2 * S * A + 2 * S * K)
            fwd += T * (2 * (E + K) * G * H + 2 * H * G * H)
            fwd += T * 2 * (H + K + E) * V
    return 3 * fwd


# ----------------------------------------------------------------------------- models

class PositionalEncoding(nn.Module):
    def __init__(self, emb_size, maxlen=5000):
        super().__init__()
        den = torch.exp(-torch.arange(0, emb_size, 2) * math.log(10000) / emb_size)
        pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        pe = torch.zeros((maxlen, emb_size))
        pe[:, 0::2] = torch.sin(pos * den)
        pe[:, 1::2] = torch.cos(pos * den)
        self.register_buffer("pos_embedding", pe.unsqueeze(0))  # [1, maxlen, E]

    def forward(self, x):  # [B,T,E]
        return x + self.pos_embedding[:, : x.size(1)]


class Seq2SeqTransformer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        E = cfg["E"]
        self.E, self.Vt = E, cfg["Vt"]
        self.transformer = nn.Transformer(d_model=E, nhead=cfg["heads"],
                                          num_encoder_layers=cfg["L"],
                                          num_decoder_layers=cfg["L"],
                                          dim_feedforward=cfg["F"], dropout=0.0,
                                          batch_first=True)
        self.generator = nn.Linear(E, cfg["Vt"])
        self.src_tok_emb = nn.Embedding(cfg["Vs"], E)
        self.tgt_tok_emb = nn.Embedding(cfg["Vt"], E)
        self.positional_encoding = PositionalEncoding(E)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def embed_src(self, src):
        return self.positional_encoding(self.src_tok_emb(src) * math.sqrt(self.E))

    def embed_tgt(self, tgt):
        return self.positional_encoding(self.tgt_tok_emb(tgt) * math.sqrt(self.E))

    def forward(self, src, dec_in):
        T = dec_in.shape[1]
        tgt_mask = self.transformer.generate_square_subsequent_mask(T)
        src_pad, tgt_pad = src == PAD, dec_in == PAD
        out = self.transformer(self.embed_src(src), self.embed_tgt(dec_in), tgt_mask=tgt_mask,
                               src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_pad,
                               memory_key_padding_mask=src_pad)
        return self.generator(out)  # [B,T,V]

    def encode(self, src):
        pad = src == PAD
        return self.transformer.encoder(self.embed_src(src), src_key_padding_mask=pad), pad

    def decode_last(self, ys, memory, memory_pad):
        """The tutorial's decoding step: the decoder re-run on the whole prefix ys [n,t];
        log-probabilities of the next token [n,V] from the last position."""
        mask = self.transformer.generate_square_subsequent_mask(ys.shape[1])
        out = self.transformer.decoder(self.embed_tgt(ys), memory, tgt_mask=mask,
                                       memory_key_padding_mask=memory_pad)
        return torch.log_softmax(self.generator(out[:, -1]), dim=1)


class TutorialGRU(nn.Module):
    """bentrevett/pytorch-seq2seq notebook 3, in PyTorch's fastest form (see the header)."""

    def __init__(self, cfg):
        super().__init__()
        E, He, H, A, Vs, Vt = cfg["E"], cfg["He"], cfg["H"], cfg["A"], cfg["Vs"], cfg["Vt"]
        self.H, self.K, self.Vt = H, 2 * He, Vt
        self.enc_embedding = nn.Embedding(Vs, E)
        self.enc_rnn = nn.GRU(E, He, bidirectional=True, batch_first=True)
        self.enc_fc = nn.Linear(2 * He, H)
        self.attn = nn.Linear(2 * He + H, A)  # reads [hidden; encoder output]
        self.v = nn.Linear(A, 1, bias=False)
        self.dec_embedding = nn.Embedding(Vt, E)
        self.dec_rnn = nn.GRUCell(2 * He + E, H)  # reads [emb; context]
        self.fc_out = nn.Linear(2 * He + H + E, Vt)  # reads [h; context; emb]

    def forward(self, src, src_len, dec_in):
        S = src.shape[1]
        x = self.enc_embedding(src)
        packed = pack_padded_sequence(x, src_len, batch_first=True, enforce_sorted=False)
        out, h_n = self.enc_rnn(packed)
        enc, _ = pad_packed_sequence(out, batch_first=True, total_length=S)  # [B,S,K]
        h = torch.tanh(self.enc_fc(torch.cat([h_n[-2], h_n[-1]], dim=1)))
        mask = torch.arange(S)[None, :] >= src_len[:, None]
        W_h, W_e = self.attn.weight[:, : self.H], self.attn.weight[:, self.H:]
        keys = F.linear(enc, W_e, self.attn.bias)  # once per batch
        emb = self.dec_embedding(dec_in)  # [B,T,E]
        rows = []
        for t in range(dec_in.shape[1]):
            energy = torch.tanh(F.linear(h, W_h).unsqueeze(1) + keys)
            a = torch.softmax(self.v(energy).squeeze(2).masked_fill(mask, float("-inf")), dim=1)
            c = torch.bmm(a.unsqueeze(1), enc).squeeze(1)
            h = self.dec_rnn(torch.cat([emb[:, t], c], dim=1), h)
            rows.append(torch.cat([h, c, emb[:, t]], dim=1))
        return self.fc_out(torch.stack(rows, dim=1))  # [B,T,V], one Linear


def build(cfg, seed):
    torch.manual_seed(seed)
    model = Seq2SeqTransformer(cfg) if cfg["kind"] == "transformer" else TutorialGRU(cfg)
    return model, torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)


def loss_fn(model, batch):
    if isinstance(model, Seq2SeqTransformer):
        logits = model(batch["src"], batch["dec_in"])
    else:
        logits = model(batch["src"], batch["src_len"], batch["dec_in"])
    return F.cross_entropy(logits.reshape(-1, model.Vt), batch["gold"].reshape(-1),
                           ignore_index=PAD)


def train_step(model, opt, params, batch):
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model, batch)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
    return loss


# ----------------------------------------------------------------------------- benches

def bench_train(args):
    cfg = CONFIGS[args.config]
    model, opt = build(cfg, args.seed)
    params = list(model.parameters())
    pool = make_pool(args.seed + 1, cfg)
    model.train()
    timed_train(args, lambda batch: train_step(model, opt, params, batch), pool, cfg["kind"],
                params, statistics.mean(b["n_tokens"] for b in pool),
                statistics.mean(useful_flops(cfg, b) for b in pool))


def greedy(model, src):
    memory, pad = model.encode(src)
    ys = torch.full((src.shape[0], 1), SOS, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(DECODE_MAX_LEN):
        tok = model.decode_last(ys, memory, pad).argmax(dim=1)
        ys = torch.cat([ys, tok[:, None]], dim=1)
        done = done | (tok == EOS)
        if bool(done.all()):
            break
    res = []
    for row in ys[:, 1:].tolist():
        res.append(row[: row.index(EOS) + 1] if EOS in row else row)
    return res


def beam_search(model, src, k=BEAM, alpha=ALPHA, max_len=DECODE_MAX_LEN):
    """src [1,S] -> the best hypothesis; torch_baseline.py's rules, the prefix re-run."""
    memory1, pad1 = model.encode(src)
    scores = torch.zeros(1)
    ys = torch.full((1, 1), SOS, dtype=torch.long)
    finished = []
    best_possible_div = max_len ** alpha
    for t in range(1, max_len + 1):
        n = ys.shape[0]
        logp = model.decode_last(ys, memory1.expand(n, -1, -1), pad1.expand(n, -1))
        top_s, top_i = (scores[:, None] + logp).reshape(-1).topk(min(2 * k, n * model.Vt))
        keep_b, keep_t, keep_s = [], [], []
        for s, i in zip(top_s.tolist(), top_i.tolist()):
            b, w = divmod(i, model.Vt)
            if w == EOS:
                finished.append((s / (t ** alpha), ys[b, 1:].tolist() + [w]))
            elif len(keep_b) < k:
                keep_b.append(b)
                keep_t.append(w)
                keep_s.append(s)
        if not keep_b:
            break
        ys = torch.cat([ys[torch.tensor(keep_b)], torch.tensor(keep_t)[:, None]], dim=1)
        scores = torch.tensor(keep_s)
        if t == max_len:
            finished.extend((s / (t ** alpha), row) for s, row in zip(keep_s, ys[:, 1:].tolist()))
            break
        if finished and max(f[0] for f in finished) >= max(keep_s) / best_possible_div:
            break
    return max(finished, key=lambda f: f[0])[1]


def bench_decode(args):
    cfg = CONFIGS[args.config]
    if cfg["kind"] != "transformer":
        raise SystemExit("decode: config t only")
    mode, batch = args.mode or "greedy", args.batch or 1
    if mode == "beam5" and batch != 1:
        raise SystemExit("beam5 is measured at batch 1 only")
    model, _ = build(cfg, args.seed)
    model.eval()
    gen = torch.Generator().manual_seed(args.seed + 2)
    sources = [random_sentence(gen, cfg["Vs"], cfg["min_len"], cfg["max_len"]) for _ in range(64)]

    def run(i):
        j = (i * batch) % len(sources)
        src, _ = pad_batch([sources[(j + r) % len(sources)] for r in range(batch)])
        return [beam_search(model, src)] if mode == "beam5" else greedy(model, src)

    with torch.no_grad():
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
    emit(dict(impl="torch", bench="decode", config=args.config, mode=mode, batch=batch,
              threads=args.threads, sentences_per_s=round(n_sent / el, 3),
              peak_rss_mb=round(peak_rss_mb(), 1), sentences=n_sent,
              mean_len=round(n_tok / n_sent, 3), torch_version=torch.__version__))


def bench_check(args):
    """The parameter count (g: the tutorial's 20,518,405) and a falling loss on one batch;
    t: greedy of width-1 beam equals greedy."""
    cfg = CONFIGS[args.config]
    model, opt = build(cfg, args.seed)
    params = list(model.parameters())
    count = sum(p.numel() for p in params)
    batch = make_pool(args.seed + 1, cfg, n=1)[0]
    losses = [float(train_step(model, opt, params, batch)) for _ in range(30)]
    ok_count = cfg["kind"] != "gru" or count == TUTORIAL_GRU_PARAMETERS
    ok_fall = losses[-1] < 0.7 * losses[0]
    ok_beam1 = True
    if cfg["kind"] == "transformer":
        model.eval()
        with torch.no_grad():
            for b in range(3):
                src = batch["src"][b: b + 1, : int(batch["src_len"][b])]
                g = greedy(model, src)[0]
                ok_beam1 = ok_beam1 and (beam_search(model, src, k=1) == g or EOS in g)
    emit(dict(impl="torch", bench="check", config=args.config, parameters=count,
              loss_init=round(losses[0], 4), ln_vt=round(math.log(cfg["Vt"]), 4),
              loss_30=round(losses[-1], 4), ok_count=ok_count, ok_fall=ok_fall,
              ok_beam1=ok_beam1))
    if not (ok_count and ok_fall and ok_beam1):
        sys.exit(1)


def main():
    p = argparse.ArgumentParser(description="PyTorch baselines of the tutorial models")
    p.add_argument("--bench", choices=["train", "decode", "check"], default="train")
    p.add_argument("--config", choices=sorted(CONFIGS), default="t")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--mode", choices=["greedy", "beam5"], default=None)
    p.add_argument("--batch", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--warmup-seconds", type=float, default=3.0)
    p.add_argument("--warmup-steps", type=int, default=10)
    args = p.parse_args()
    check_env(args.threads)
    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    {"train": bench_train, "decode": bench_decode, "check": bench_check}[args.bench](args)


if __name__ == "__main__":
    main()
