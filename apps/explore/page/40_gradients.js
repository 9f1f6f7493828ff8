// ---- 2c. this sentence's gradient flow --------------------------------------------------------
function renderGradients() {
  const box = clear(document.getElementById("gradients-body")), s = S[state.sentence];
  if (s.empty) { box.append(el("p", {}, "This input line is empty.")); return; }
  const g = s.gradflow;
  if (!g) { box.append(el("p", {}, notComputed("gradflow"))); return; }
  box.append(el("p", {}, el("b", {}, "source: "), el("span", { class: "text" }, s.source)));
  const lossText = `The teacher-forced loss L of this sentence against ${g.target === "reference" ? "its reference" : "the beam's best hypothesis (no reference)"} (L = ${fmt(g.loss, 4)}, mean cross-entropy per target token), backpropagated once, as seqgrad gradflow does for a batch. `;
  const transformer = g.kind === "transformer";
  box.append(el("p", { class: "muted" }, lossText + (transformer
    ? "\u2016\u2202L/\u2202h_s\u2016 is the gradient reaching the encoder's output (the memory) at source position s: only the decoder's cross-attention reads it, so all of it arrives through attention, and there is no recurrence to split it with. \u2016\u2202L/\u2202e_s\u2016 is the gradient at the encoder's input, \u221ad\u00b7embedding + position, which the encoder's self-attention mixes from every position."
    : "\u2016\u2202L/\u2202h_s\u2016 is the gradient reaching the encoder's state at source position s; the part through attention is the gradient of the encoder outputs the attention reads (the context vectors' path, length 1), the part through the recurrence is the rest (via h_{s+1}, and the decoder's initial state at the last position). The two parts are vectors that add up to the total; their norms need not.")));
  const pos = g.hidden.map((v, i) => i + 1);
  const total = { name: "\u2016\u2202L/\u2202h_s\u2016 total", color: "#1d232a", points: pos.map((x, i) => [x, g.hidden[i]]) };
  const embedding = { name: "\u2016\u2202L/\u2202e_s\u2016 (embedding)", color: "#2a9d4b", points: pos.map((x, i) => [x, g.embedding[i]]) };
  const series = transformer ? [total, embedding]
    : [total, { name: "through attention", color: "#2b7bb9", points: pos.map((x, i) => [x, g.direct[i]]) },
       { name: "through the recurrence", color: "#e67e22", points: pos.map((x, i) => [x, g.recurrent[i]]) }, embedding];
  box.append(el("div", { class: "charts" }, chart("gradient norm per source position (log scale)", series, { log: true, x: "position" })));
  const heads = transformer ? ["position", "token", "\u2016\u2202L/\u2202h_s\u2016 (memory)", "\u2016\u2202L/\u2202e_s\u2016"]
    : ["position", "token", "\u2016\u2202L/\u2202h_s\u2016", "through attention", "through recurrence", "\u2016\u2202L/\u2202e_s\u2016"];
  const t = el("table", { class: "plain", id: "gradflow-table" }, el("thead", {}, el("tr", {}, ...heads.map(x => el("th", {}, x)))));
  const tb = el("tbody");
  g.hidden.forEach((v, i) => tb.append(el("tr", {}, el("td", {}, i + 1), el("td", {}, tokenEl(s.source_tokens[i] ?? "")),
    ...(transformer ? [v, g.embedding[i]] : [v, g.direct[i], g.recurrent[i], g.embedding[i]]).map(x => el("td", { class: "num" }, x === null ? "\u2013" : Number(x).toPrecision(3))))));
  t.append(tb);
  box.append(el("div", { class: "scroll" }, t));
  const groups = g.groups, top = Math.max(...Object.values(groups).map(x => x ?? 0)) || 1;
  const mt = el("table", { class: "plain", id: "module-norms" }, el("thead", {}, el("tr", {}, el("th", {}, "parameters"), el("th", {}, "gradient norm"), el("th"))));
  const mb = el("tbody");
  const labels = transformer
    ? [["encoder", "transformer.encoder.*, source embedding and positions"], ["attention", "the decoder's cross-attention (multihead_attn.*)"], ["decoder", "the rest of the decoder"], ["output", "out.* (out_bias when shared)"], ["total", "all parameters"]]
    : [["encoder", "encoder.*"], ["attention", "decoder.attention.*"], ["decoder", "other decoder.*"], ["output", "decoder.out.*"], ["total", "all parameters"]];
  for (const [name, label] of labels)
    mb.append(el("tr", {}, el("td", {}, label), el("td", { class: "num" }, groups[name] === null ? "\u2013" : Number(groups[name]).toPrecision(3)),
      el("td", {}, el("span", { class: "bar", style: `width:${Math.round(160 * (groups[name] ?? 0) / top)}px` }))));
  mt.append(mb);
  box.append(el("h3", {}, "gradient norm per module (the groups seqgrad train logs)"), mt);
}
