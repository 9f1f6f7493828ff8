// ---- live: any sentence, decoded in the page; what-if from the tree -------------------------------
// The bar under the header: a text box, the decode settings and a status line. A decoded sentence
// joins the file's sentences (S, the picker) and is drawn by the same views as the precomputed
// ones, from the explorer's own data block (seqgrad_live_sentence builds it with explore_data).
const liveSettings = { beam_size: META.beam_size || 5, alpha: META.alpha ?? 0.6,
                       length_penalty: META.length_penalty || "average", no_repeat_ngram: 0 };
function liveBar() {
  const input = el("input", { type: "text", id: "live-input", size: "60", maxlength: String(LIVE.max_source_chars || 1000),
                              placeholder: "type any sentence", "aria-label": "sentence to decode" });
  const number = (id, label, value, attrs) => el("label", { class: "muted" }, label + " ",
    el("input", { type: "number", id, value: String(value), style: "width:5em", ...attrs }));
  const penalty = el("select", { id: "live-penalty", "aria-label": "length penalty" },
    ...["none", "average", "gnmt"].map(p => el("option", { value: p }, p)));
  penalty.value = liveSettings.length_penalty;
  const go = el("button", { type: "button", id: "live-decode" }, "Decode");
  const bar = el("div", { id: "live-bar" }, el("b", {}, "Live: "), input, go,
    number("live-beam", "beam", liveSettings.beam_size, { min: "1", max: "32" }),
    number("live-alpha", "\u03b1", liveSettings.alpha, { min: "0", max: "5", step: "0.1" }),
    el("label", { class: "muted" }, "length penalty ", penalty),
    number("live-ngram", "n-gram block", liveSettings.no_repeat_ngram, { min: "0", max: "10" }),
    el("span", { id: "live-status", class: "muted", role: "status" }, ""));
  document.querySelector("nav").before(bar);
  const run = () => decodeLive(input.value);
  go.addEventListener("click", run);
  input.addEventListener("keydown", e => { if (e.key === "Enter") run(); });
}
function readSettings() {
  const num = (id, fallback) => { const v = parseFloat(document.getElementById(id).value); return isFinite(v) ? v : fallback; };
  liveSettings.beam_size = Math.round(num("live-beam", 5));
  liveSettings.alpha = num("live-alpha", 0.6);
  liveSettings.length_penalty = document.getElementById("live-penalty").value;
  liveSettings.no_repeat_ngram = Math.round(num("live-ngram", 0));
  return liveSettings;
}
// The columns the engine leaves out (as explore_data's trace_for_page does in the file).
function expandTrace(s) {
  if (s.empty) return;
  const tr = s.trace, n = tr.nodes;
  n.status = n.status.map(c => tr.status_names[c]);
  n.length_penalty = n.step.map(t => tr.length_penalty_by_step[t]);
}
async function decodeLive(source) {
  document.getElementById("live-input").value = source;
  if (!source.trim()) { liveStatus("type a sentence first", true); return; }
  await engine.ready;
  const r = await engine.call("seqgrad_live_sentence", JSON.stringify({ source, ...readSettings() }), "decoding");
  if (r.error) return;
  const s = r.sentences[0];
  Object.assign(DATA.target_tokens, r.target_tokens);
  // the maths of the ops on its tape, and what was computed, for the derivative views
  const g = r.meta.gradients || {};
  META.gradients = Object.assign({}, g, META.gradients && META.gradients.enabled ? META.gradients : {},
                                 { tape_maths: Object.assign({}, g.tape_maths, (META.gradients || {}).tape_maths) });
  expandTrace(s);
  s.live = { ms: r.wall_ms, settings: { ...liveSettings } };
  S.push(s);
  document.getElementById("sentence-select").append(el("option", { value: S.length - 1 }, `live: ${source.length > 90 ? source.slice(0, 90) + "\u2026" : source}`));
  liveTest.decoded.push({ source, greedy: s.empty ? [] : s.greedy.tokens, beam: s.empty ? [] : s.nbest[0].tokens, ms: r.wall_ms });
  liveStatus(`decoded in ${r.wall_ms} ms (beam ${liveSettings.beam_size}; saliency, gradient flow and tape included)`);
  if (state.view === "corpus" || state.view === "training" || state.view === "train") show("tree");
  choose(S.length - 1);
  selftest();
}
// What-if, live: the tree's details of any node get a button that forces the tokens from the root
// to that node and shows what the model decodes after them (beam search, the live settings).
function prefixOf(s, node) {
  const n = s.trace.nodes, out = [];
  for (let i = node; i > 0 && n.parent[i] >= 0; i = n.parent[i]) out.unshift(n.token[i]);
  return out;
}
const detailsOfFile = details;
details = function (i) {
  detailsOfFile(i);
  const s = S[state.sentence], box = document.getElementById("tree-details");
  if (!box || s.empty || i <= 0) return;
  const prefix = prefixOf(s, i);
  const out = el("div", { id: "live-force-result" });
  box.append(el("p", {}, el("button", { type: "button", id: "live-force", onclick: () => forceLive(s, prefix, out) },
    `force these ${prefix.length} tokens and decode on`)), out);
};
async function forceLive(s, prefix, out) {
  const r = await engine.call("seqgrad_live_force", JSON.stringify({ source: s.source, prefix, ...readSettings() }), "what-if");
  clear(out);
  if (r.error) { out.append(el("p", { class: "neg" }, r.error)); return; }
  Object.assign(DATA.target_tokens, r.target_tokens);
  const d = r.score - s.nbest[0].score;
  out.append(el("div", { class: "tokens" }, ...r.tokens.map((id, k) => el("span", { class: k < prefix.length - 1 ? "forced" : k === prefix.length - 1 ? "alt" : "" }, tok(id)))),
    el("p", {}, el("span", { class: "text" }, r.text), el("span", { class: "muted" }, `  score ${fmt(r.score, 4)} (`),
      el("span", { class: d >= 0 ? "pos" : "neg" }, (d >= 0 ? "+" : "") + fmt(d, 4)), el("span", { class: "muted" }, ` vs the best; ${r.wall_ms} ms)`)));
  liveTest.forced.push({ prefix, tokens: r.tokens, score: r.score });
  selftest();
}
SELFTEST_FIELDS.push(() => ({ live: liveTest }));
liveBar();
