// ---- the test hook: what the page shows, as numbers a headless browser can read ---------------
function selftest() {
  const s = S[state.sentence];
  const heatRows = s.empty ? [] : (hypotheses(s)[Math.min(state.hyp, hypotheses(s).length - 1)][1].attention);
  document.getElementById("selftest").textContent = JSON.stringify({
    problems, alerts, resources: performance.getEntriesByType("resource").map(r => r.name),
    sentences: S.length, rows: document.querySelectorAll("#corpus-table tbody tr").length,
    sentence: state.sentence, view: state.view,
    tree_nodes: document.querySelectorAll("#tree-svg g.node").length, trace_nodes: s.empty ? 0 : s.trace.nodes.parent.length,
    heat_cells: document.querySelectorAll("#heatmap td.cell").length, weights: heatRows.reduce((a, r) => a + r.length, 0),
    what_if_rows: document.querySelectorAll("#whatif-body tbody tr").length,
    saliency_cells: document.querySelectorAll("#saliency-heatmap td.cell").length, saliency_attention_cells: document.querySelectorAll("#saliency-attention td.cell").length,
    agreement_rows: document.querySelectorAll("#agreement tbody tr").length, gradflow_rows: document.querySelectorAll("#gradflow-table tbody tr").length,
    gradflow_charts: document.querySelectorAll("#gradients-body svg").length, words: state.words, joiners: document.querySelectorAll(".joiner").length, charts: document.querySelectorAll("#training-body svg").length,
    render_ms: renderTimes,
    ...Object.assign({}, ...SELFTEST_FIELDS.map(f => f())),
  });
}

const renderTimes = {};  // ms per view for the last sentence drawn (the test reads them)
function renderSentence() {
  eachRun(() => {
    for (const f of [renderAttention, renderSaliency, renderGradients, renderTree, renderCompare, renderWhatIf, ...SENTENCE_VIEWS]) {
      const t0 = performance.now();
      try { f(); } catch (e) { problems.push(`${f.name}: ${e.message}`); consoleError(e); }
      renderTimes[f.name] = Math.round(performance.now() - t0);
    }
  });
  const s = S[state.sentence];
  document.getElementById("picker-note").textContent = s.empty ? "(empty line)" : (s.reference !== undefined ? "reference: " + s.reference : "");
}

header();
readHash();
renderCorpus();
document.getElementById("filter").addEventListener("input", renderCorpus);
eachRun(renderTraining);
if (S.length) { choose(state.sentence); } else { document.getElementById("view-corpus").append(el("p", {}, "No sentences.")); }
show(state.view);
window.addEventListener("hashchange", () => { readHash(); choose(state.sentence); show(state.view); selftest(); });
selftest();
