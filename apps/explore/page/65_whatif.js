// ---- 5. what-if --------------------------------------------------------------------------------
function renderWhatIf() {
  const box = clear(document.getElementById("whatif-body")), s = S[state.sentence];
  if (s.empty) { box.append(el("p", {}, "This input line is empty.")); return; }
  const b = s.nbest[0];
  box.append(el("p", {}, el("b", {}, "source: "), el("span", { class: "text" }, s.source)));
  box.append(el("p", {}, "best hypothesis: ", el("span", { class: "text" }, b.text), el("span", { class: "muted" }, `  (score ${fmt(b.score, 4)})`)));
  box.append(el("p", { class: "muted" }, `At each of the first ${META.what_if_steps} steps, the most probable other tokens, and what the model decodes (beam ${META.beam_size}) when forced to take one. The same from the command line: seqgrad translate RUN_DIR --prefix "the forced words".`));
  if (!s.what_if.length) { box.append(el("p", {}, "No alternatives were recorded for this sentence.")); return; }
  const t = el("table", { class: "plain" }, el("thead", {}, el("tr", {}, ...["step", "instead of", "forced token", "p", "continuation", "score", "vs best"].map(x => el("th", {}, x)))));
  const tb = el("tbody");
  for (const w of s.what_if) {
    const d = w.score - b.score;
    tb.append(el("tr", {}, el("td", {}, w.step), el("td", {}, `${tok(b.tokens[w.step - 1])} (p = ${prob(s.trace.nodes.token_log_prob[pathNode(s, w.step)])})`),
      el("td", {}, tok(w.token)), el("td", {}, prob(w.token_log_prob)),
      el("td", {}, el("div", { class: "tokens" }, ...w.tokens.map((id, k) => el("span", { class: k < w.step - 1 ? "forced" : k === w.step - 1 ? "alt" : "" }, tok(id))))),
      el("td", {}, fmt(w.score, 4)), el("td", { class: d >= 0 ? "pos" : "neg" }, (d >= 0 ? "+" : "") + fmt(d, 4))));
  }
  t.append(tb);
  box.append(t, el("div", { class: "legend" }, el("span", {}, el("span", { class: "swatch", style: "background:#d9ecff" }), "the best hypothesis' words, forced"),
    el("span", {}, el("span", { class: "swatch", style: "background:#ffe7b3" }), "the alternative, forced"), el("span", {}, el("span", { class: "swatch", style: "background:#eef2f6" }), "decoded freely")));
}
function pathNode(s, step) {
  const path = [];
  for (let i = s.trace.nbest_nodes[0]; i > 0; i = s.trace.nodes.parent[i]) path.unshift(i);
  return path[step - 1];
}
