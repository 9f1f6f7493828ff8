"use strict";
// ---- what went wrong, for the browser test (and for anyone who opens the console) ----------
const problems = [];
window.addEventListener("error", e => problems.push("error: " + e.message));
window.addEventListener("unhandledrejection", e => problems.push("rejection: " + e.reason));
document.addEventListener("securitypolicyviolation", e => problems.push("csp: " + e.blockedURI));
const consoleError = console.error.bind(console);
console.error = (...a) => { problems.push("console: " + a.join(" ")); consoleError(...a); };
let alerts = 0;
window.alert = () => { alerts++; };

// One run's data, or {"runs": [one run's data, ...]} for runs side by side: the views draw the
// current run (DATA, S, META), which useRun(k) changes (apps/explore/page/85_runs.js).
const FILE = JSON.parse(document.getElementById("seqgrad-data").textContent);
const RUNS = FILE.runs || [FILE];
let DATA = RUNS[0], S = DATA.sentences, META = DATA.meta;
// The columns the file leaves out to stay small (apps/explore/explore_data.cpp, trace_for_page).
for (const s of RUNS.flatMap(r => r.sentences)) {
  if (s.empty) continue;
  const tr = s.trace, n = tr.nodes;
  n.status = n.status.map(c => tr.status_names[c]);
  n.length_penalty = n.step.map(t => tr.length_penalty_by_step[t]);
}
for (const r of RUNS) r.corpus = r.corpus || {};
const VIEWS = [["corpus", "Corpus"], ["attention", "Attention"], ["saliency", "Saliency"],
               ["gradients", "Gradient flow"], ["tree", "Beam tree"],
               ["compare", "Greedy vs beam"], ["whatif", "What-if"], ["training", "Training"]];
// A view in a file of its own (apps/explore/page/NN_name.js, concatenated in name order) registers
// itself: its tab (placed before `before`), its section with a heading and an empty "<id>-body"
// div, the function that draws the chosen sentence, and the numbers the browser test reads.
const SENTENCE_VIEWS = [];   // functions that draw the chosen sentence, after the built-in ones
const SELFTEST_FIELDS = [];  // functions returning {field: value} for the test hook
function addView(id, label, heading, { render, selftest, before = "training" } = {}) {
  const at = VIEWS.findIndex(v => v[0] === before);
  VIEWS.splice(at < 0 ? VIEWS.length : at, 0, [id, label]);
  const section = el("section", { class: "view", id: "view-" + id, role: "tabpanel", "aria-label": heading },
                     el("h2", {}, heading), el("div", { id: id + "-body" }));
  const next = document.getElementById("view-" + before);
  document.querySelector("main").insertBefore(section, next);
  if (render) SENTENCE_VIEWS.push(render);
  if (selftest) SELFTEST_FIELDS.push(selftest);
}
const state = { sentence: 0, view: "corpus", hyp: 0, node: -1, sort: [0, 1], words: false, method: "grad_norm" };
// A view's own fields in the URL fragment: {read(URLSearchParams), write() -> "&key=value" or ""}.
const HASH_FIELDS = [];

// ---- small helpers: elements are built with textContent only -------------------------------
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}
// The SVG namespace, derived from the HTML one, so that the file holds no "http(s)://" string at
// all: the browser test checks that, as a simple proof that nothing is fetched.
const SVGNS = document.documentElement.namespaceURI.replace("1999/xhtml", "2000/svg");
function sv(tag, attrs, ...children) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : String(c));
  return e;
}
const fmt = (x, d = 2) => x === null || x === undefined ? "\u2013" : Number(x).toFixed(d);
// Subword marks: the pre-tokeniser's joiner U+FFED (no space on this side) has no glyph in many
// fonts, so plain text (option lists, the tree's SVG) shows it as a middle dot, and HTML as a
// drawn mark (tokenEl); a BPE token's trailing "@@" (continues into the next token) as a small
// styled "@@".
const JOINER = "\uFFED";
const rawTok = id => DATA.target_tokens[id] ?? ("#" + id);
const plain = t => t.split(JOINER).join("\u00b7");
const tok = id => plain(rawTok(id));
function tokenEl(text) {
  const span = el("span", { class: "tok" });
  let rest = text, bpe = false;
  if (rest.length > 2 && rest.endsWith("@@")) { bpe = true; rest = rest.slice(0, -2); }
  rest.split(JOINER).forEach((part, i) => {
    if (i) span.append(el("span", { class: "joiner", title: "joiner (U+FFED): no space on this side", role: "img", "aria-label": "joiner" }));
    if (part) span.append(part);
  });
  if (bpe) span.append(el("span", { class: "bpe", title: "@@: this subword continues into the next token" }, "@@"));
  return span;
}
const prob = lp => lp === null ? "0" : Math.exp(lp).toFixed(3);
function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); return e; }
// white -> blue: the colour of an attention weight in [0, 1]
function heat(w) {
  const t = Math.max(0, Math.min(1, w));
  const r = Math.round(255 - t * (255 - 17)), g = Math.round(255 - t * (255 - 71)), b = Math.round(255 - t * (255 - 145));
  return `rgb(${r},${g},${b})`;
}

// ---- header, tabs, sentence picker, URL fragment ------------------------------------------
function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  if (p.has("sentence")) state.sentence = Math.max(0, Math.min(S.length - 1, parseInt(p.get("sentence"), 10) || 0));
  if (p.has("view") && VIEWS.some(v => v[0] === p.get("view"))) state.view = p.get("view");
  else if (p.has("sentence") && !p.has("view")) state.view = "tree";
  state.hyp = p.has("hyp") ? parseInt(p.get("hyp"), 10) || 0 : 0;
  if (p.has("words")) state.words = p.get("words") === "1";
  if (p.has("method")) state.method = p.get("method");
  if (p.has("sort")) {  // the corpus table's column (from 0), "-" for descending
    const last = (RUNS.length > 1 ? runsColumns() : COLUMNS).length - 1;
    state.sort = [Math.min(last, Math.abs(parseInt(p.get("sort"), 10) || 0)), p.get("sort").startsWith("-") ? -1 : 1];
  }
  if (p.has("zoom")) state.zoom = Math.max(0.25, Math.min(2, parseFloat(p.get("zoom")) || 1));
  for (const f of HASH_FIELDS) f.read(p);
}
function writeHash() {
  const h = `#sentence=${state.sentence}&view=${state.view}` + (state.hyp ? `&hyp=${state.hyp}` : "") +
            (state.words ? "&words=1" : "") + (state.method !== "grad_norm" ? `&method=${state.method}` : "") +
            (state.zoom && state.zoom !== 1 ? `&zoom=${state.zoom}` : "") + HASH_FIELDS.map(f => f.write()).join("");
  if (location.hash !== h) history.replaceState(null, "", h);
}
function header() {
  document.getElementById("title").textContent = "seqgrad explore \u2014 " + RUNS.map(r => r.meta.run_dir).join(" vs ");
  if (RUNS.length > 1) runsHeader();
  else runSummary(document.getElementById("meta"), document.getElementById("scores"));
  tabsAndPicker();
}
// The current run's settings into `metaBox`, its corpus scores (and their signatures) into `box`.
function runSummary(metaBox, box, signatures = true) {
  const lp = META.length_penalty === "none" ? "no length penalty" : `${META.length_penalty} length penalty, alpha ${META.alpha}`;
  metaBox.textContent =
    `${META.task} task, ${META.tokenizer}-level, ` + (META.transformer ? transformerSummary(META.transformer)
      : `${META.attention} attention, hidden ${META.hidden_size}`) + "; " +
    `checkpoint ${META.checkpoint}; beam ${META.beam_size}, n-best ${META.nbest}, ${lp}, max length ${META.max_length}; ` +
    `${META.sentences} sentences from ${META.origin}` + (META.available > META.sentences ? ` (the first ${META.sentences} of ${META.available})` : "");
  for (const name of ["greedy", "beam"]) {
    const c = DATA.corpus[name];
    if (!c) continue;
    // Every published definition, labelled as `seqgrad eval --metrics all` labels it.
    const scores = c.definitions ? c.definitions.map(d => `${d.label} ${fmt(d.score)}`).join(", ")
                                 : `BLEU ${fmt(c.bleu)}, chrF ${fmt(c.chrf)}`;
    box.append(el("div", {}, el("b", {}, `${name}: ${scores}` + (c.accuracy !== undefined ? `, accuracy ${fmt(c.accuracy)}%` : "")),
                   el("div", { class: "muted" }, c.bleu_line)));
  }
  const ag = DATA.corpus.agreement;
  if (ag) box.append(el("div", { class: "muted" }, `attention vs saliency (${ag.method}), mean over ${ag.sentences} sentences: argmax agrees at ${fmt(100 * ag.argmax_share, 0)}% of the steps, Spearman ${fmt(ag.mean_spearman, 3)}`));
  if (signatures) scoreSignatures(box);
}
// The signatures of the current run's corpus scores (the same definitions for every run).
function scoreSignatures(box) {
  const defs = (DATA.corpus.greedy || {}).definitions;
  if (defs)
    box.append(el("div", { class: "muted" }, ...defs.flatMap(d => [`${d.label}: ${d.signature}`, el("br")])));
  else if (DATA.corpus.bleu_signature)
    box.append(el("div", { class: "muted" }, "BLEU|" + DATA.corpus.bleu_signature, el("br"), "chrF2|" + DATA.corpus.chrf_signature));
}
function tabsAndPicker() {
  const tabs = document.getElementById("tabs");
  for (const [id, label] of VIEWS)
    tabs.append(el("button", { type: "button", role: "tab", id: "tab-" + id, "aria-controls": "view-" + id,
                               onclick: () => show(id) }, label));
  tabs.addEventListener("keydown", e => {
    const i = VIEWS.findIndex(v => v[0] === state.view);
    if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      const j = (i + (e.key === "ArrowRight" ? 1 : VIEWS.length - 1)) % VIEWS.length;
      show(VIEWS[j][0]); document.getElementById("tab-" + VIEWS[j][0]).focus();
    }
  });
  const select = document.getElementById("sentence-select");
  S.forEach((s, i) => select.append(el("option", { value: i }, `${i}: ${s.source.length > 90 ? s.source.slice(0, 90) + "\u2026" : s.source}`)));
  select.addEventListener("change", () => choose(parseInt(select.value, 10)));
  document.getElementById("prev").addEventListener("click", () => choose(Math.max(0, state.sentence - 1)));
  document.getElementById("next").addEventListener("click", () => choose(Math.min(S.length - 1, state.sentence + 1)));
}
function show(view) {
  state.view = view;
  for (const [id] of VIEWS) {
    document.getElementById("view-" + id).classList.toggle("active", id === view);
    document.getElementById("tab-" + id).setAttribute("aria-selected", id === view ? "true" : "false");
  }
  document.getElementById("picker").style.display = view === "corpus" || view === "training" ? "none" : "flex";
  if (view === "tree") scrollTree();
  writeHash();
}
// Choosing a sentence anywhere opens it in every view.
function choose(i) {
  if (i !== state.sentence) state.hyp = 0;  // (the URL's &hyp= holds for its own sentence)
  state.sentence = i; state.node = -1;
  document.getElementById("sentence-select").value = String(i);
  for (const row of document.querySelectorAll("#corpus-table tbody tr"))
    row.classList.toggle("selected", Number(row.dataset.index) === i);
  renderSentence();
  writeHash();
  selftest();
}
