// ---- 1. corpus table ------------------------------------------------------------------------
const COLUMNS = [
  ["#", (s, i) => i, true], ["source", s => s.source], ["reference", s => s.reference ?? ""],
  ["greedy", s => s.empty ? "" : s.greedy.text], ["beam", s => s.empty ? "" : s.nbest[0].text],
  ["BLEU greedy", s => s.bleu?.greedy, true], ["BLEU beam", s => s.bleu?.beam, true],
  ["\u0394 BLEU", s => s.bleu ? s.bleu.beam - s.bleu.greedy : undefined, true],
  ["chrF greedy", s => s.chrf?.greedy, true], ["chrF beam", s => s.chrf?.beam, true],
  ["\u0394 chrF", s => s.chrf ? s.chrf.beam - s.chrf.greedy : undefined, true],
  ["len src", s => s.empty ? 0 : s.source_tokens.length, true],
  ["len greedy", s => s.empty ? 0 : s.greedy.tokens.length, true],
  ["len beam", s => s.empty ? 0 : s.nbest[0].tokens.length, true],
  ["attn~sal \u03c1", s => s.saliency?.agreement?.mean_spearman, true],
  ["attention flags", s => flags(s).join(" ")],
];
function flags(s) {
  if (s.empty || !s.nbest[0].flags) return [];
  const f = s.nbest[0].flags, out = [];
  if (f.dispersed > 0) out.push(`dispersed ${Math.round(100 * f.dispersed)}%`);
  if (f.on_last >= 0.5) out.push(`on <eos> ${Math.round(100 * f.on_last)}%`);
  if (!f.monotonic) out.push(`non-monotonic (${Math.round(100 * f.forward)}% forward)`);
  return out;
}
// A row of the corpus table for sentence i: a click or Enter opens the sentence (in the tree
// view), the arrow keys move between rows.
function corpusRow(i) {
  const tr = el("tr", { tabindex: "0", "data-index": i, class: i === state.sentence ? "selected" : "" });
  const open = () => { choose(i); show("tree"); };
  tr.addEventListener("click", open);
  tr.addEventListener("keydown", e => {
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(); }
    else if (e.key === "ArrowDown" && tr.nextElementSibling) { e.preventDefault(); tr.nextElementSibling.focus(); }
    else if (e.key === "ArrowUp" && tr.previousElementSibling) { e.preventDefault(); tr.previousElementSibling.focus(); }
  });
  return tr;
}
function renderCorpus() {
  if (RUNS.length > 1) return renderRunsCorpus();
  const head = clear(document.querySelector("#corpus-table thead")), row = el("tr");
  COLUMNS.forEach(([name], c) => {
    const arrow = state.sort[0] === c ? (state.sort[1] > 0 ? " \u25b2" : " \u25bc") : "";
    row.append(el("th", { scope: "col", "aria-sort": state.sort[0] === c ? (state.sort[1] > 0 ? "ascending" : "descending") : "none" },
      el("button", { type: "button", onclick: () => { state.sort = [c, state.sort[0] === c ? -state.sort[1] : 1]; renderCorpus(); } }, name + arrow)));
  });
  head.append(row);
  const query = document.getElementById("filter").value.toLowerCase();
  const [col, dir] = state.sort, key = COLUMNS[col][1], numeric = COLUMNS[col][2];
  const order = S.map((s, i) => i).filter(i => {
    if (!query) return true;
    const s = S[i];
    return [s.source, s.reference ?? "", s.empty ? "" : s.greedy.text, s.empty ? "" : s.nbest[0].text].some(t => t.toLowerCase().includes(query));
  });
  order.sort((a, b) => {
    let x = key(S[a], a), y = key(S[b], b);
    if (numeric) { x = x ?? -Infinity; y = y ?? -Infinity; return dir * (x - y) || a - b; }
    return dir * String(x).localeCompare(String(y)) || a - b;
  });
  const body = clear(document.querySelector("#corpus-table tbody"));
  for (const i of order) {
    const s = S[i], tr = corpusRow(i);
    COLUMNS.forEach(([name, f, numeric], c) => {
      if (c === 1 && s.empty) { tr.append(el("td", { class: "text" }, el("i", {}, "(empty line: nothing to translate)"))); return; }
      const v = f(s, i);
      if (name === "attention flags") { tr.append(el("td", {}, ...flags(s).map(x => el("span", { class: "flag" }, x)))); return; }
      const cls = numeric ? "num" + (name.startsWith("\u0394") && v ? (v > 0 ? " pos" : " neg") : "") : "text";
      if (name.startsWith("attn~sal")) { tr.append(el("td", { class: "num" }, v === undefined ? "\u2013" : fmt(v, 2))); return; }
      tr.append(el("td", { class: cls }, numeric && c >= 5 && c <= 10 ? (v === undefined ? "\u2013" : (name.startsWith("\u0394") && v > 0 ? "+" : "") + fmt(v, 1)) : v));
    });
    body.append(tr);
  }
  document.getElementById("filter-count").textContent = query ? `${order.length} of ${S.length} sentences` : `${S.length} sentences`;
}
