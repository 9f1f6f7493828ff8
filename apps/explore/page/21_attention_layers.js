// ---- 2b. attention: a Transformer's three attentions, any layer and head -----------------------
// renderAttention (20_attention.js) calls transformerMatrix for a Transformer run (META.transformer)
// and draws what it returns.
// The file holds every layer's and head's weights for beam #1 and greedy (sentences[i].transformer,
// in thousandths; apps/explore/explore_attention.h): the encoder's self-attention [S, S], the
// decoder's causal self-attention [T, T] (row t over steps 0..t) and the cross-attention [T, S].
// The head average is computed here. The other hypotheses have the top decoder layer's
// cross-attention averaged over heads only (their "attention", as an RNN model's).
const PARTS = [["cross", "cross-attention (output \u2192 source)"], ["encoder", "encoder self-attention (source \u2192 source)"],
               ["decoder", "decoder self-attention (output \u2192 earlier outputs, causal)"]];
// The choice is shared by the runs of a file of several (85_runs.js); each run draws the nearest it
// has (its top layer, the mean over its heads).
const TRANSFORMERS = RUNS.map(r => r.meta.transformer).filter(t => t);
if (TRANSFORMERS.length) {
  Object.assign(state, { part: "cross", layer: null, head: "mean" });  // layer null: the top one
  HASH_FIELDS.push({
    read(p) {
      if (p.has("attention") && PARTS.some(x => x[0] === p.get("attention"))) state.part = p.get("attention");
      if (p.has("layer")) state.layer = parseInt(p.get("layer"), 10);
      if (p.has("head")) state.head = p.get("head") === "mean" ? "mean" : parseInt(p.get("head"), 10);
      clampLayerHead();
    },
    write: () => (state.part !== "cross" ? `&attention=${state.part}` : "") + (state.layer !== null ? `&layer=${state.layer}` : "") +
                 (state.head !== "mean" ? `&head=${state.head}` : ""),
  });
  SELFTEST_FIELDS.push(transformerSelftest);
}
function transformerSummary(t) {
  return `Transformer, ${t.encoder_layers} encoder + ${t.decoder_layers} decoder layers, d_model ${t.d_model}, ${t.heads} heads, ` +
         `feed-forward ${t.ff_size}, ${t.norm_first ? "pre-norm" : "post-norm"}, ${t.positional} positions`;
}
const layersOf = t => state.part === "encoder" ? t.encoder_layers : t.decoder_layers;
const layerCount = () => layersOf(META.transformer);  // the current run's
function clampLayerHead() {
  const layers = Math.max(...TRANSFORMERS.map(layersOf)), heads = Math.max(...TRANSFORMERS.map(t => t.heads));
  if (state.layer !== null && !(state.layer >= 0 && state.layer < layers)) state.layer = null;
  if (state.head !== "mean" && !(state.head >= 0 && state.head < heads)) state.head = "mean";
}
const shownLayer = () => state.layer === null ? layerCount() - 1 : Math.min(state.layer, layerCount() - 1);
const shownHead = () => state.head !== "mean" && state.head < META.transformer.heads ? state.head : "mean";
const isDefaultChoice = () => state.part === "cross" && shownLayer() === META.transformer.decoder_layers - 1 && shownHead() === "mean";
// one layer's heads [h][rows][cols] in thousandths -> the chosen head, or their mean, as weights
function chooseHead(heads) {
  if (shownHead() !== "mean") return heads[shownHead()].map(r => r.map(w => w / 1000));
  return heads[0].map((r, t) => r.map((_, j) => heads.reduce((a, x) => a + x[t][j], 0) / (1000 * heads.length)));
}
// H / ln n of each row over its n columns (n = 1: nothing to spread over)
const rowEntropy = rows => rows.map(r => r.length < 2 ? null : -r.reduce((a, w) => a + (w > 0 ? w * Math.log(w) : 0), 0) / Math.log(r.length));
// The part, layer and head pickers (in `box`); returns the matrix to draw for hypothesis k of n.
function transformerMatrix(box, s, h, k, n) {
  const tf = META.transformer, stored = k === 0 ? s.transformer.best : k === n - 1 ? (s.transformer.greedy || s.transformer.best) : null;
  const picker = (id, label, options, value, set) => {
    const p = el("select", { id, "aria-label": label });
    for (const [v, text] of options) p.append(el("option", { value: v }, text));
    p.value = String(value);
    p.addEventListener("change", () => { set(p.value); clampLayerHead(); renderAttention(); writeHash(); selftest(); });
    return el("label", {}, label + " ", p);
  };
  const hypOptions = (document.getElementById("hyp-select") || { options: [] }).options;
  for (const i of [0, n - 1]) if (hypOptions[i]) hypOptions[i].textContent += "  [every layer and head]";
  const stack = state.part === "encoder" ? "encoder" : "decoder";
  const layers = Array.from({ length: layerCount() }, (_, l) => [l, `${l}${l === layerCount() - 1 ? " (top)" : ""}: transformer.${stack}.layers.${l}`]);
  const heads = [["mean", `mean of the ${tf.heads} heads`], ...Array.from({ length: tf.heads }, (_, i) => [i, `head ${i}`])];
  box.append(el("div", { class: "layer-head" },
    picker("part-select", "attention", PARTS, state.part, v => { state.part = v; state.layer = null; }),
    picker("layer-select", "layer", layers, shownLayer(), v => { state.layer = parseInt(v, 10); }),
    picker("head-select", "head", heads, shownHead(), v => { state.head = v === "mean" ? "mean" : parseInt(v, 10); })));
  box.append(el("p", { class: "muted" }, `Each head computes its own softmax per query: the layer's weights are [B, h, T, S] (Hugging Face's attentions). ` +
    `The file keeps every layer and head for beam #1 and greedy (in thousandths); the mean over heads (PyTorch's average_attn_weights) is computed here. ` +
    `The other hypotheses keep the top decoder layer's cross-attention, averaged over heads.`));
  const out = { srcLabels: s.source_tokens, outLabels: h.tokens.map(rawTok), weights: h.attention, entropy: h.entropy, report: h.report, masked: () => false,
               axes: "rows: output tokens (with <eos>); columns: source tokens (with <eos>)" };
  if (isDefaultChoice()) return out;
  if (state.part !== "encoder" && !stored) {
    box.append(el("p", {}, "Only beam #1 and greedy have every layer and head in the file; this hypothesis shows the top decoder layer's cross-attention averaged over heads."));
    return out;
  }
  const l = shownLayer();
  if (state.part === "encoder") {
    const w = chooseHead(s.transformer.encoder[l]);
    return { srcLabels: s.source_tokens, outLabels: s.source_tokens, weights: w, entropy: rowEntropy(w), masked: () => false,
             axes: "rows: source tokens (queries); columns: source tokens (keys), both with <eos>" };
  }
  const w = chooseHead(stored[state.part][l]);
  if (state.part === "cross") return { ...out, weights: w, entropy: rowEntropy(w), report: undefined };
  // decoder self-attention: step t sees the inputs of steps 0..t, i.e. <sos> and the outputs before t
  const inputs = ["<sos>", ...out.outLabels.slice(0, -1)];
  return { srcLabels: inputs, outLabels: out.outLabels, weights: w.map(r => inputs.map((_, j) => j < r.length ? r[j] : 0)),
           entropy: rowEntropy(w), report: undefined, masked: (t, j) => j > t,
           axes: "rows: output tokens (step t); columns: the decoder's inputs (<sos> and the outputs before), hatched: masked (later steps); S in H/ln S: the t + 1 visible columns" };
}
// The test hook: the pickers' sizes, the choice, and how far the stored heads' mean is from the
// head-averaged weights decoding returned (top decoder layer, cross-attention, beam #1 and greedy).
function transformerSelftest() {
  const s = S[state.sentence], count = id => (document.getElementById(id) || { options: [] }).options.length;
  if (!META.transformer) return {};  // (the first of several runs is an RNN)
  let meanError = null;
  if (!s.empty) {
    const tf = META.transformer, top = tf.decoder_layers - 1;
    for (const [h, stored] of [[s.nbest[0], s.transformer.best], [s.greedy, s.transformer.greedy || s.transformer.best]]) {
      const heads = stored.cross[top];
      h.attention.forEach((r, t) => r.forEach((w, j) => {
        const mean = heads.reduce((a, x) => a + x[t][j], 0) / (1000 * heads.length);
        meanError = Math.max(meanError || 0, Math.abs(mean - w));
      }));
    }
  }
  return { attention_part: state.part, layer: shownLayer(), head: shownHead(), part_options: count("part-select"),
           layer_options: count("layer-select"), head_options: count("head-select"), head_mean_error: meanError,
           masked_cells: document.querySelectorAll("#heatmap td.masked").length,
           ...(SELFTEST_ALL && state.view === "attention" && !s.empty ? { every_choice: everyChoice() } : {}) };
}
// With &selftest=all in the URL (the browser test), every attention, layer and head of the sentence
// is drawn once, beam #1's, and the test reads what each drew: the pickers' sizes, the cells and
// the weights shown (row-major, as their titles give them), against the file's data.
const SELFTEST_ALL = location.hash.includes("selftest=all"), everyChoiceDone = {};
function everyChoice() {
  if (everyChoiceDone[state.sentence]) return everyChoiceDone[state.sentence];
  const saved = { part: state.part, layer: state.layer, head: state.head, hyp: state.hyp, words: state.words }, out = [];
  Object.assign(state, { hyp: 0, words: false });
  for (const [part] of PARTS) {
    state.part = part;
    for (let layer = 0; layer < layerCount(); layer++)
      for (const head of ["mean", ...Array.from({ length: META.transformer.heads }, (_, i) => i)]) {
        Object.assign(state, { layer, head });
        try { renderAttention(); } catch (e) { problems.push(`renderAttention(${part}, ${layer}, ${head}): ${e.message}`); }
        const count = id => (document.getElementById(id) || { options: [] }).options.length;
        out.push({ attention: part, layer, head, layer_options: count("layer-select"), head_options: count("head-select"),
                   masked: document.querySelectorAll("#heatmap td.masked").length,
                   shown: [...document.querySelectorAll("#heatmap td.cell")].map(td => parseFloat(td.title.split(": ").pop())) });
      }
  }
  Object.assign(state, saved);
  renderAttention();
  return (everyChoiceDone[state.sentence] = out);
}
