// ---- 7. two or more runs side by side ------------------------------------------------------------
// A file of several runs ({"runs": [...]}: seqgrad explore RUN_A RUN_B) holds the same sentences
// decoded by each model. Every view's body becomes one column per run, and each view draws the
// current run (DATA, S, META) into the element ids it knows. Each column keeps its own copy of
// those ids; the column being drawn, or the one a reader clicks, types or focuses in, holds them
// as they are, the others with a "--runK" suffix (activateRun). One run: nothing changes.
const runLetter = k => String.fromCharCode(65 + k);
function useRun(k) { DATA = RUNS[k]; S = DATA.sentences; META = DATA.meta; state.run = k; }
function activateRun(k) {
  for (const e of document.querySelectorAll("[data-run] [id]:not([data-run-id])")) e.dataset.runId = e.id;
  for (const e of document.querySelectorAll("[data-run-id]")) {
    const column = Number(e.closest("[data-run]").dataset.run);
    e.id = column === k ? e.dataset.runId : `${e.dataset.runId}--run${column}`;
  }
  useRun(k);
}
// Calls draw() once per run, each drawing into its own columns; run 0 is current afterwards.
function eachRun(draw) {
  if (RUNS.length === 1) return draw();
  const scrolls = [];
  RUNS.forEach((r, k) => { activateRun(k); draw(); scrolls.push(scrollTree); });
  activateRun(0);
  scrollTree = () => new Set(scrolls).forEach(f => f());
}
const runKind = m => m.model === "transformer" ? `Transformer, ${m.tokenizer}-level`
  : `${(m.model ?? "rnn").toUpperCase()} encoder-decoder, ${m.attention === "none" ? "no" : m.attention} attention, ${m.tokenizer}-level`;
function runLabel(k) {
  const m = RUNS[k].meta;
  return el("div", { class: "run-name" }, el("b", {}, `${runLetter(k)}: `), el("span", { class: "text" }, m.run_dir), el("span", { class: "muted" }, ` (${runKind(m)})`));
}
// The header of a file of several runs: each run's settings and corpus scores, side by side.
function runsHeader() {
  const box = document.getElementById("scores");
  document.getElementById("meta").textContent =
    `${RUNS.length} runs side by side on the same ${META.sentences} sentences (${META.origin}` +
    (META.available > META.sentences ? `, the first ${META.sentences} of ${META.available}` : "") + ")";
  box.classList.add("run-columns");
  box.style.gridTemplateColumns = `repeat(${RUNS.length}, minmax(0, 1fr))`;
  RUNS.forEach((r, k) => {
    useRun(k);
    const meta = el("div", { class: "meta" }), scores = el("div", { class: "scores" });
    runSummary(meta, scores, false);
    box.append(el("div", { class: "run-column" }, runLabel(k), meta, scores));
  });
  useRun(0);
  const signatures = el("div", { class: "run-signatures" });
  scoreSignatures(signatures);
  box.after(signatures);
}
// The corpus table of several runs: each run's beam output with its sentence BLEU and chrF, and
// the difference of each run from the first (A).
function runsColumns() {
  const cols = [["#", i => i, true], ["source", i => RUNS[0].sentences[i].source], ["reference", i => RUNS[0].sentences[i].reference ?? ""]];
  RUNS.forEach((r, k) => {
    const s = i => r.sentences[i], L = runLetter(k);
    cols.push([`${L} beam`, i => s(i).empty ? "" : s(i).nbest[0].text], [`${L} BLEU`, i => s(i).bleu?.beam, true], [`${L} chrF`, i => s(i).chrf?.beam, true]);
  });
  for (let k = 1; k < RUNS.length; k++) {
    const a = RUNS[0].sentences, b = RUNS[k].sentences;
    const delta = key => i => a[i][key] && b[i][key] ? b[i][key].beam - a[i][key].beam : undefined;
    cols.push([`\u0394 BLEU ${runLetter(k)}\u2212A`, delta("bleu"), true], [`\u0394 chrF ${runLetter(k)}\u2212A`, delta("chrf"), true]);
  }
  return cols;
}
function renderRunsCorpus() {
  const cols = runsColumns(), head = clear(document.querySelector("#corpus-table thead")), row = el("tr");
  cols.forEach(([name], c) => {
    const sorted = state.sort[0] === c, arrow = sorted ? (state.sort[1] > 0 ? " \u25b2" : " \u25bc") : "";
    row.append(el("th", { scope: "col", "aria-sort": sorted ? (state.sort[1] > 0 ? "ascending" : "descending") : "none" },
      el("button", { type: "button", onclick: () => { state.sort = [c, sorted ? -state.sort[1] : 1]; renderRunsCorpus(); selftest(); } }, name + arrow)));
  });
  head.append(row);
  const query = document.getElementById("filter").value.toLowerCase();
  const texts = i => [RUNS[0].sentences[i].source, RUNS[0].sentences[i].reference ?? "", ...RUNS.map(r => r.sentences[i].empty ? "" : r.sentences[i].nbest[0].text)];
  const order = RUNS[0].sentences.map((s, i) => i).filter(i => !query || texts(i).some(t => t.toLowerCase().includes(query)));
  const [col, dir] = [Math.min(state.sort[0], cols.length - 1), state.sort[1]], [, key, numeric] = cols[col];
  order.sort((a, b) => {
    let x = key(a), y = key(b);
    if (numeric) { x = x ?? -Infinity; y = y ?? -Infinity; return dir * (x - y) || a - b; }
    return dir * String(x).localeCompare(String(y)) || a - b;
  });
  const body = clear(document.querySelector("#corpus-table tbody"));
  for (const i of order) {
    const tr = corpusRow(i);
    cols.forEach(([name, f, numeric]) => {
      const v = f(i), delta = name.startsWith("\u0394");
      if (!numeric) { tr.append(el("td", { class: "text" }, v)); return; }
      if (name === "#") { tr.append(el("td", { class: "num" }, v)); return; }
      tr.append(el("td", { class: "num" + (delta && v ? (v > 0 ? " pos" : " neg") : "") }, v === undefined ? "\u2013" : (delta && v > 0 ? "+" : "") + fmt(v, 1)));
    });
    body.append(tr);
  }
  const n = RUNS[0].sentences.length;
  document.getElementById("filter-count").textContent = query ? `${order.length} of ${n} sentences` : `${n} sentences`;
}
if (RUNS.length > 1) {
  document.querySelector("#view-corpus p.muted").textContent =
    "Every sentence with each run's beam-search output (" + RUNS.map((r, k) => `${runLetter(k)} = ${r.meta.run_dir}`).join(", ") +
    "), its sentence-level BLEU and chrF (sacreBLEU's sentence_bleu / sentence_chrf), and the difference of each run from A. Click a column to sort (the differences show where the models part); click a row (or focus it and press Enter) to open the sentence in every view, one column per run.";
  for (const [id] of VIEWS) {
    const body = document.getElementById(id + "-body");
    if (!body) continue;
    const grid = el("div", { class: "run-columns", style: `grid-template-columns: repeat(${RUNS.length}, minmax(0, 1fr))` });
    RUNS.forEach((r, k) => {
      const column = el("div", { class: "run-column", "data-run": k }, runLabel(k),
                        el("div", { id: k ? `${id}-body--run${k}` : id + "-body", "data-run-id": id + "-body" }));
      // An event inside a column makes its run the current one before any handler runs.
      for (const type of ["click", "change", "input", "keydown", "focus"])
        column.addEventListener(type, () => { if (state.run !== k) activateRun(k); }, true);
      grid.append(column);
    });
    body.replaceWith(grid);
  }
  state.run = 0;
  // What each column drew, for the browser test.
  const counts = (view, selector) => [...document.querySelectorAll(`#view-${view} .run-column`)].map(c => c.querySelectorAll(selector).length);
  SELFTEST_FIELDS.push(() => ({
    runs: RUNS.map(r => r.meta.run_dir),
    run_tree_nodes: counts("tree", "g.node"),
    run_heat_cells: counts("attention", "table.heat td.cell"),
    run_saliency_cells: counts("saliency", "table[id^=saliency-heatmap] td.cell"),
    run_gradflow_rows: counts("gradients", "table[id^=gradflow-table] tbody tr"),
    row_order: [...document.querySelectorAll("#corpus-table tbody tr")].map(r => Number(r.dataset.index)),
  }));
}
