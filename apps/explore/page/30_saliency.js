// ---- 2b. saliency beside attention ------------------------------------------------------------
// Subwords merged into words, as `seqgrad attention --words` does: a token ending in "@@"
// continues into the next; a source word's value is the sum of its subwords' values, an output
// word's row the mean of its subwords' rows.
function groupWords(tokens) {
  const groups = [], labels = [];
  let cur = [], text = "";
  tokens.forEach((t, i) => {
    cur.push(i);
    if (t.length > 2 && t.endsWith("@@")) { text += t.slice(0, -2); return; }
    groups.push(cur); labels.push(text + t); cur = []; text = "";
  });
  if (cur.length) { groups.push(cur); labels.push(text); }
  return { groups, labels };
}
function mergeMatrix(m, rows, cols) {
  return rows.groups.map(g => cols.groups.map(c => g.reduce((a, t) => a + c.reduce((b, j) => b + m[t][j], 0), 0) / g.length));
}
const hasSubwords = s => !s.empty && (s.source_tokens.some(t => t.endsWith("@@")) || s.nbest[0].tokens.some(id => rawTok(id).endsWith("@@")));
function argmaxAbs(row) { let b = 0; row.forEach((v, i) => { if (Math.abs(v) > Math.abs(row[b])) b = i; }); return b; }
function ranks(x) {
  const order = x.map((v, i) => i).sort((a, b) => x[a] - x[b] || a - b), r = new Array(x.length);
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j + 1 < order.length && x[order[j + 1]] === x[order[i]]) j++;
    for (let k = i; k <= j; k++) r[order[k]] = (i + j) / 2;
    i = j + 1;
  }
  return r;
}
// Spearman rank correlation (ties: mean ranks; 0 when a row is constant), as apps/studies/saliency.cpp
function spearman(x, y) {
  const rx = ranks(x), ry = ranks(y), m = (x.length - 1) / 2;
  let sxy = 0, sxx = 0, syy = 0;
  for (let i = 0; i < x.length; i++) { sxy += (rx[i] - m) * (ry[i] - m); sxx += (rx[i] - m) ** 2; syy += (ry[i] - m) ** 2; }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : 0;
}
function heatTable(id, rowLabels, colLabels, values, tip) {
  const table = el("table", { class: "heat", id }), head = el("tr", {}, el("th"));
  for (const c of colLabels) head.append(el("th", { scope: "col" }, tokenEl(c)));
  table.append(el("thead", {}, head));
  const body = el("tbody");
  values.forEach((row, t) => {
    const top = Math.max(...row.map(Math.abs)) || 1, tr = el("tr", {}, el("th", { scope: "row" }, tokenEl(rowLabels[t])));
    row.forEach((v, j) => tr.append(el("td", { class: "cell", style: `background:${heat(Math.abs(v) / top)}`, tabindex: "-1",
      title: `${plain(rowLabels[t])} \u2192 ${plain(colLabels[j])}: ${tip(v)}` })));
    body.append(tr);
  });
  table.append(body);
  return table;
}
const METHODS = { grad_norm: "gradient norm \u2016\u2202 log p(y_t) / \u2202e_s\u2016", grad_input: "gradient \u00d7 input \u2211_d e_sd \u2202 log p(y_t)/\u2202e_sd",
                  integrated_gradients: "integrated gradients (zero-embedding baseline)" };
// Why a sentence has no saliency or gradient flow (or, view "tape", no tape) in the file.
function notComputed(view) {
  const g = META.gradients;
  if (g && g.reason) return g.reason;
  if (!g || g.enabled === false) return "This file was written without the gradient views (seqgrad explore --no-gradients).";
  return `Saliency and gradient flow are in this file for the first ${g.sentences} sentences only (they cost about what decoding them costs): seqgrad explore --gradient-sentences N computes them for more.`;
}
function renderSaliency() {
  const box = clear(document.getElementById("saliency-body")), s = S[state.sentence];
  if (s.empty) { box.append(el("p", {}, "This input line is empty: there is nothing to translate.")); return; }
  if (!s.saliency) { box.append(el("p", {}, notComputed("saliency"))); return; }
  const h = s.nbest[0], sal = s.saliency;
  const methods = Object.keys(METHODS).filter(m => sal[m]);
  if (!methods.includes(state.method)) state.method = "grad_norm";
  const pick = el("select", { id: "method-select", "aria-label": "saliency method" });
  for (const m of methods) pick.append(el("option", { value: m }, METHODS[m]));
  pick.value = state.method;
  pick.addEventListener("change", () => { state.method = pick.value; renderSaliency(); writeHash(); selftest(); });
  const controls = el("p", {}, el("label", {}, "method ", pick));
  if (hasSubwords(s)) {
    const box2 = el("input", { type: "checkbox", id: "words-toggle" });
    box2.checked = state.words;
    box2.addEventListener("change", () => { state.words = box2.checked; renderAttention(); renderSaliency(); writeHash(); selftest(); });
    controls.append(" ", el("label", {}, box2, " words (subwords merged; untick for the subword tokens the model read)"));
  }
  box.append(el("p", {}, el("b", {}, "source: "), el("span", { class: "text" }, s.source)),
             el("p", {}, el("b", {}, "beam #1: "), el("span", { class: "text" }, h.text)), controls);
  if (!sal.integrated_gradients && META.gradients?.integrated_sentences !== undefined)
    box.append(el("p", { class: "muted" }, `Integrated gradients (${META.gradients.integrated_steps} steps) are in this file for the first ${META.gradients.integrated_sentences} sentences only (seqgrad explore --ig-sentences N): they cost ${META.gradients.integrated_steps} times the other two.`));
  let srcLabels = s.source_tokens, outLabels = h.tokens.map(rawTok), values = sal[state.method], attention = h.attention;
  if (state.words && hasSubwords(s)) {
    const rows = groupWords(outLabels), cols = groupWords(srcLabels);
    values = mergeMatrix(values, rows, cols);
    if (attention.length) attention = mergeMatrix(attention, rows, cols);
    srcLabels = cols.labels; outLabels = rows.labels;
  }
  box.append(el("p", { class: "muted" }, `Each output token y_t of the beam's best hypothesis, differentiated with respect to the embedding e_s of every source position (the same numbers as seqgrad saliency). Colours: each row scaled by its largest magnitude; hover a cell for the value. ${state.method === "grad_norm" ? "" : "Signed values are coloured by magnitude. "}`));
  const pair = el("div", { class: "pair" });
  if (attention.length)
    pair.append(el("div", {}, el("h3", {}, "attention weights"), el("div", { class: "scroll" }, heatTable("saliency-attention", outLabels, srcLabels, attention, v => v.toFixed(3)))));
  pair.append(el("div", {}, el("h3", {}, METHODS[state.method]), el("div", { class: "scroll" }, heatTable("saliency-heatmap", outLabels, srcLabels, values, v => Number(v).toPrecision(3)))));
  box.append(pair);
  if (sal.integrated_gradients && state.method === "integrated_gradients")
    box.append(el("p", { class: "muted" }, `Completeness: every row of integrated gradients sums to log p(y_t | x) \u2212 log p(y_t | zero embeddings) within ${sal.integrated_check} (the ${META.gradients.integrated_steps}-step midpoint rule's error).`));
  if (!attention.length) { box.append(el("p", {}, `This model has no attention (model.attention = "${META.attention}"): saliency only, nothing to compare it with.`)); return; }
  const t = el("table", { class: "plain", id: "agreement" }, el("thead", {}, el("tr", {}, ...["step", "output", "most attended", "weight", "most salient", "agree", "Spearman \u03c1"].map(x => el("th", {}, x)))));
  const tb = el("tbody");
  let agreeing = 0, rho = 0;
  values.forEach((row, k) => {
    const a = attention[k].indexOf(Math.max(...attention[k])), m = argmaxAbs(row), r = spearman(attention[k], row.map(Math.abs));
    agreeing += a === m; rho += r;
    tb.append(el("tr", {}, el("td", {}, k + 1), el("td", {}, tokenEl(outLabels[k])), el("td", {}, tokenEl(srcLabels[a]), ` @${a + 1}`), el("td", {}, fmt(attention[k][a], 3)),
      el("td", {}, tokenEl(srcLabels[m]), ` @${m + 1}`), el("td", { class: a === m ? "agree" : "disagree" }, a === m ? "yes" : "no"), el("td", {}, fmt(r, 3))));
  });
  t.append(tb);
  box.append(el("h3", {}, "Where they agree"),
    el("p", {}, `This sentence: the most attended and the most salient source position are the same at ${agreeing} of ${values.length} steps; mean Spearman rank correlation ${fmt(rho / values.length, 3)}.` +
      (DATA.corpus.agreement ? ` Corpus (gradient norm, ${DATA.corpus.agreement.sentences} sentences): ${fmt(100 * DATA.corpus.agreement.argmax_share, 0)}% of the steps, \u03c1 ${fmt(DATA.corpus.agreement.mean_spearman, 3)}.` : "")),
    t,
    el("p", { class: "muted" }, "Attention shows where the decoder looked; saliency how much log p(y_t) changes when a source embedding moves. A step where they disagree is one where the position the decoder read is not the one its output is most sensitive to: with a one-directional encoder the state at s+1 also holds token s, and a confident prediction (p near 1) has small, flat gradients. Signed methods are compared by magnitude."));
}
