// ---- 2. attention ------------------------------------------------------------------------------
function hypotheses(s) {
  return [...s.nbest.map((h, r) => [`beam #${r + 1}`, h]), ["greedy", s.greedy]];
}
function renderAttention() {
  const box = clear(document.getElementById("attention-body")), s = S[state.sentence];
  if (s.empty) { box.append(el("p", {}, "This input line is empty: there is nothing to translate.")); return; }
  const hyps = hypotheses(s), k = Math.min(state.hyp, hyps.length - 1), [label, h] = hyps[k];
  const pick = el("select", { id: "hyp-select", "aria-label": "hypothesis" });
  hyps.forEach(([l, x], i) => pick.append(el("option", { value: i }, `${l}: ${x.text}  (score ${fmt(x.score, 3)})`)));
  pick.value = String(k);
  pick.addEventListener("change", () => { state.hyp = parseInt(pick.value, 10); renderAttention(); writeHash(); selftest(); });
  box.append(el("p", {}, el("b", {}, "source: "), el("span", { class: "text" }, s.source)), el("label", {}, "hypothesis ", pick));
  if (!h.attention.length) { box.append(el("p", {}, `This model has no attention (model.attention = "${META.attention}"): its decoder sees only the encoder's final state.`)); return; }
  let srcLabels = s.source_tokens, outLabels = h.tokens.map(rawTok), weights = h.attention;
  let entropy = h.entropy, report = h.report, masked = () => false, axes = "rows: output tokens (with <eos>); columns: source tokens (with <eos>)";
  if (META.transformer)  // a kind of attention, a layer and a head: the matrix to draw instead
    ({ srcLabels, outLabels, weights, entropy, report, masked, axes } = transformerMatrix(box, s, h, k, hyps.length));
  box.append(el("div", { class: "legend" }, "weight", el("span", {}, "0"),
    el("canvas", { class: "gradient", width: "160", height: "12", id: "gradient" }), el("span", {}, "1"),
    el("span", { class: "muted" }, `${axes}; hover or focus a cell for its weight; H/ln S: normalised entropy (0 one-hot, 1 uniform)`)));
  const canvas = box.querySelector("#gradient"), ctx = canvas.getContext("2d");
  for (let x = 0; x < 160; x++) { ctx.fillStyle = heat(x / 159); ctx.fillRect(x, 0, 1, 12); }
  // the words view of a BPE run (subwords merged as seqgrad attention --words does), one click away
  const words = state.words && hasSubwords(s);
  if (hasSubwords(s)) {
    const toggle = el("input", { type: "checkbox", id: "attention-words" });
    toggle.checked = state.words;
    toggle.addEventListener("change", () => { state.words = toggle.checked; renderAttention(); renderSaliency(); writeHash(); selftest(); });
    box.append(el("p", {}, el("label", {}, toggle, " words (subwords merged: a source word's weight is the sum of its subwords', an output word's row the mean of its subwords' rows)")));
  }
  if (words) {
    const rows = groupWords(outLabels), cols = groupWords(srcLabels);
    weights = mergeMatrix(weights, rows, cols);
    srcLabels = cols.labels; outLabels = rows.labels; masked = () => false;
  }
  const table = el("table", { class: "heat", id: "heatmap" }), head = el("tr", {}, el("th"));
  for (const t of srcLabels) head.append(el("th", { scope: "col" }, tokenEl(t)));
  head.append(el("th", { scope: "col" }, words ? "" : "H/ln S"));
  table.append(el("thead", {}, head));
  const body = el("tbody");
  weights.forEach((row, t) => {
    const tr = el("tr", {}, el("th", { scope: "row" }, tokenEl(outLabels[t])));
    row.forEach((w, j) => tr.append(masked(t, j) ? el("td", { class: "masked", title: `${plain(outLabels[t])} \u2192 ${plain(srcLabels[j])}: masked (a later step)` })
      : el("td", { class: "cell", style: `background:${heat(w)}`, tabindex: "-1",
      title: `${plain(outLabels[t])} \u2192 ${plain(srcLabels[j])}: ${w.toFixed(3)}` })));
    tr.append(el("td", { class: "ent" }, entropy && !words ? fmt(entropy[t], 3) : ""));
    body.append(tr);
  });
  table.append(body);
  box.append(el("div", { class: "scroll" }, table));
  if (META.coverage && META.coverage !== "none") box.append(...coverageRows(h.attention, outLabels, srcLabels, words && groupWords(h.tokens.map(rawTok)), words && groupWords(s.source_tokens)));
  if (report) box.append(el("h3", {}, "Diagnosis (as seqgrad attention prints it)"), el("pre", {}, report));
  else if (META.transformer && !isDefaultChoice()) box.append(el("p", { class: "muted" }, "The diagnosis in words is in the file for the top decoder layer's cross-attention averaged over heads (the default choice); the H/ln S column above is this matrix's per-row entropy."));
  else box.append(el("p", { class: "muted" }, "The diagnosis in words is in the file for beam #1 and greedy; the H/ln S column above is this hypothesis' per-step entropy."));
}

// A coverage model (model.coverage) reads c_t = Σ_{t'<t} α_{t'}: under the heatmap, the coverage after
// each step (the sum of the weights in that row and the rows above, i.e. the c of the next step),
// a darker cell for a source position attended more; above 1 a position has had more than one
// whole step of attention. In the words view, as the heatmap: columns summed, rows averaged.
function coverageRows(attention, outLabels, srcLabels, rows, cols) {
  let c = new Array(attention[0].length).fill(0);
  let covered = attention.map(row => (c = c.map((v, j) => v + row[j])));
  if (rows) covered = mergeMatrix(covered, rows, cols);
  const table = el("table", { class: "heat", id: "coverage-heatmap" }), head = el("tr", {}, el("th"));
  for (const t of srcLabels) head.append(el("th", { scope: "col" }, tokenEl(t)));
  table.append(el("thead", {}, head));
  const body = el("tbody");
  covered.forEach((row, t) => {
    const tr = el("tr", {}, el("th", { scope: "row" }, tokenEl(outLabels[t])));
    row.forEach((v, j) => tr.append(el("td", { class: "cell", style: `background:${heat(v)}`, tabindex: "-1",
      title: `coverage of ${plain(srcLabels[j])} after ${plain(outLabels[t])}: ${v.toFixed(3)}` })));
    body.append(tr);
  });
  table.append(body);
  return [el("h3", {}, `Coverage (model.coverage = "${META.coverage}")`),
          el("p", { class: "muted" }, "c after each step: the attention each source token has had so far (the sum of the heatmap's rows down to this one), what the next step's score reads; the colour saturates at 1"),
          el("div", { class: "scroll" }, table)];
}
SELFTEST_FIELDS.push(() => ({ coverage_cells: document.querySelectorAll("#coverage-heatmap td.cell").length }));
