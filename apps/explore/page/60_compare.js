// ---- 4. greedy versus beam -------------------------------------------------------------------
function tokenRow(ids, highlight, cls) {
  return el("div", { class: "tokens" }, ...ids.map((id, t) => el("span", { class: t >= highlight && highlight >= 0 ? cls : "" }, tok(id))));
}
function renderCompare() {
  const box = clear(document.getElementById("compare-body")), s = S[state.sentence];
  if (s.empty) { box.append(el("p", {}, "This input line is empty.")); return; }
  const g = s.greedy, b = s.nbest[0], d = s.diverge;
  box.append(el("p", {}, el("b", {}, "source: "), el("span", { class: "text" }, s.source)));
  if (s.reference !== undefined) box.append(el("p", {}, el("b", {}, "reference: "), el("span", { class: "text" }, s.reference)));
  box.append(el("h3", {}, "greedy"), tokenRow(g.tokens, d, "diff"), el("h3", {}, "beam search (best of " + META.beam_size + ")"), tokenRow(b.tokens, d, "diff"));
  box.append(el("p", {}, d < 0 ? "The two outputs are identical." : `They first differ at output token ${d + 1}: greedy took "${d < g.tokens.length ? tok(g.tokens[d]) : "(the end)"}", beam search kept "${d < b.tokens.length ? tok(b.tokens[d]) : "(the end)"}".`));
  const t = el("table", { class: "plain" }, el("thead", {}, el("tr", {}, ...["", "tokens", "log-prob L", "length penalty lp", "L / lp", "coverage", "score", "sentence BLEU", "chrF"].map(x => el("th", {}, x)))));
  const tb = el("tbody");
  for (const [name, h, key] of [["greedy", g, "greedy"], ["beam #1", b, "beam"]])
    tb.append(el("tr", {}, el("th", {}, name), el("td", {}, h.tokens.length), el("td", {}, fmt(h.log_prob, 4)), el("td", {}, fmt(h.length_penalty, 4)),
      el("td", {}, fmt(h.score - h.coverage, 4)), el("td", {}, fmt(h.coverage, 4)), el("td", {}, fmt(h.score, 4)),
      el("td", {}, s.bleu ? fmt(s.bleu[key], 1) : "\u2013"), el("td", {}, s.chrf ? fmt(s.chrf[key], 1) : "\u2013")));
  t.append(tb);
  box.append(el("h3", {}, "the model's score of each, under the same length penalty"), t);
  const diff = b.score - g.score;
  box.append(el("p", {}, diff > 1e-9 ? `Beam search found a hypothesis the model scores ${fmt(diff, 4)} higher than greedy's.` :
    diff < -1e-9 ? `Greedy's output scores ${fmt(-diff, 4)} higher: beam search pruned its path (see below).` : "Both score the same."));
  // Where greedy's path left the beam
  const n = s.trace.nodes;
  let node = 0, fate = "";
  for (let t2 = 0; t2 < g.tokens.length; t2++) {
    let next = -1;
    for (let k = 1; k < n.parent.length; k++) if (n.parent[k] === node && n.token[k] === g.tokens[t2]) next = k;
    if (next < 0) { fate = `Greedy's prefix after ${t2} tokens was not expanded further in the tree.`; break; }
    node = next;
    if (n.status[next] !== "kept") { fate = `In the beam-search tree, greedy's path ends at step ${t2 + 1} ("${tok(g.tokens[t2])}"): ${reason(n, next)}.`; break; }
  }
  if (fate) box.append(el("p", {}, fate, " ", el("button", { type: "button", onclick: () => { state.node = node; show("tree"); renderTree(); selftest(); } }, "show it in the tree")));
}
