// ---- live: train a date model in the page ------------------------------------------------------
// The same pieces as `seqgrad train`: the date generator, Batcher, train_step (forward, backward,
// clipping, Adam), greedy decoding for the exact match. Steps run in the worker, a few at a time,
// so the page redraws between them: the loss, the test exact match, and the attention of one
// fixed test sentence, where the diagonal forms.
const trainState = { running: false, paused: false, losses: [], matches: [], started: 0, seconds: 0, last: null, config: null };
const TRAIN_CHUNK = 10, MEASURE_EVERY = 100, MEASURE_SENTENCES = 500;
function trainConfig() {
  const base = JSON.parse(JSON.stringify(LIVE.train_config));
  const num = (id, fallback) => { const v = parseFloat(document.getElementById(id).value); return isFinite(v) && v > 0 ? v : fallback; };
  base.train.lr = num("train-lr", base.train.lr);
  base.model.hidden_size = Math.round(num("train-hidden", base.model.hidden_size));
  base.model.attention = document.getElementById("train-attention").value;
  base.data.dates_test = Math.max(base.data.dates_test || 0, MEASURE_SENTENCES);
  return base;
}
function renderTrain() {
  const box = clear(document.getElementById("train-body"));
  if (!LIVE.train_config) {
    box.append(el("p", {}, "This page trains the date task only; this run is another task. `seqgrad explore RUN_DIR --live` of a date run (configs/dates.json) trains here."));
    return;
  }
  const c = LIVE.train_config;
  box.append(el("p", { class: "muted" }, "A fresh model of this run's config, trained here with the date generator, train_step, Adam and gradient clipping, one thread. The loss is the mean over each group of steps; the exact match is greedy decoding of the first " + MEASURE_SENTENCES + " test dates."));
  const input = (id, label, value) => el("label", { class: "muted" }, label + " ", el("input", { type: "number", id, value: String(value), style: "width:6em", step: "any" }));
  const attention = el("select", { id: "train-attention", "aria-label": "attention" }, ...["bahdanau", "luong"].map(a => el("option", { value: a }, a)));
  attention.value = c.model.attention === "luong" ? "luong" : "bahdanau";
  box.append(el("div", { class: "legend" }, input("train-lr", "learning rate", c.train.lr), input("train-hidden", "hidden size", c.model.hidden_size),
    el("label", { class: "muted" }, "attention ", attention),
    el("button", { type: "button", id: "train-start", onclick: startTraining }, "Start again"),
    el("button", { type: "button", id: "train-pause", onclick: togglePause }, "Pause"),
    el("button", { type: "button", id: "train-download", onclick: downloadWeights }, "Download weights (.safetensors)")),
    el("div", { id: "train-progress", class: "muted", role: "status" }, "not started"),
    el("div", { class: "charts", id: "train-charts" }), el("div", { id: "train-attention-map" }));
  drawTraining();
}
function drawTraining() {
  const charts = document.getElementById("train-charts");
  if (!charts) return;
  clear(charts).append(
    chart("training loss (cross-entropy per target token, log scale)", [{ name: "train", color: "#2b7bb9", points: trainState.losses }], { log: true }),
    chart("test exact match (%)", [{ name: "greedy", color: "#1b7a3a", points: trainState.matches, marks: true }]));
  const m = trainState.last, box = clear(document.getElementById("train-attention-map"));
  if (!m) return;
  box.append(el("h3", {}, `attention of "${m.sentence}" at step ${m.step}`));
  const table = el("table", { class: "heat" });
  table.append(el("thead", {}, el("tr", {}, el("th"), ...m.source_tokens.map(t => el("th", {}, t)))));
  const body = el("tbody");
  m.attention.forEach((row, t) => body.append(el("tr", {}, el("th", {}, m.tokens[t] ?? ""),
    ...row.map(w => el("td", { class: "cell", style: `background:${heat(w)}`, title: w.toFixed(3) })))));
  table.append(body);
  box.append(el("div", { class: "scroll" }, table));
}
async function startTraining() {
  trainState.running = false;  // a loop still running stops at its next chunk
  const generation = trainState.generation = (trainState.generation || 0) + 1;
  await engine.ready;
  trainState.config = trainConfig();
  const r = await engine.call("seqgrad_live_train_start", JSON.stringify(trainState.config), "preparing the data and a fresh model");
  if (r.error) return;
  Object.assign(trainState, { running: true, paused: false, losses: [], matches: [], started: performance.now(), seconds: 0, last: null, parameters: r.parameters });
  document.getElementById("train-pause").textContent = "Pause";
  if (generation === trainState.generation) trainLoop();
}
async function trainLoop() {
  if (trainState.looping) return;  // (a resume while the last chunk still runs: that loop goes on)
  trainState.looping = true;
  try { await trainChunks(); } finally { trainState.looping = false; }
}
async function trainChunks() {
  const generation = trainState.generation;
  const epochs = trainState.config.train.epochs || 3, perEpoch = Math.ceil((trainState.config.data.dates_train || 20000) / trainState.config.train.batch_size);
  const total = trainState.maxSteps || epochs * perEpoch;
  while (trainState.running && !trainState.paused && generation === trainState.generation) {
    const r = await engine.call("seqgrad_live_train_steps", TRAIN_CHUNK, "training");
    if (generation !== trainState.generation) return;  // started again meanwhile
    if (r.error) { trainState.running = false; break; }
    trainState.seconds += r.seconds;
    trainState.losses.push([r.step, r.loss]);
    liveTest.losses = trainState.losses;
    const measure = r.step % MEASURE_EVERY === 0 || r.step >= total;
    if (measure) {
      const m = await engine.call("seqgrad_live_train_measure", MEASURE_SENTENCES, "measuring");
      if (!m.error) { trainState.matches.push([m.step, m.exact_match]); trainState.last = m; liveTest.train.push({ step: m.step, exact_match: m.exact_match, seconds: trainState.seconds }); }
    }
    document.getElementById("train-progress").textContent =
      `step ${r.step} of ${total}, epoch ${r.epoch}, loss ${fmt(r.loss, 4)}, ${fmt(r.step / trainState.seconds, 1)} steps/s` +
      (trainState.last ? `, exact match ${fmt(trainState.last.exact_match, 1)}% at step ${trainState.last.step}` : "") +
      `, ${fmt(trainState.seconds, 1)} s of training`;
    if (measure || r.step % 50 === 0) drawTraining();
    selftest();
    if (r.step >= total) {
      trainState.running = false;
      liveTest.train_done = true;
      liveStatus(`trained ${total} steps in ${fmt(trainState.seconds, 1)} s`);
      selftest();
    }
  }
}
function togglePause() {
  if (!trainState.running) return;
  trainState.paused = !trainState.paused;
  document.getElementById("train-pause").textContent = trainState.paused ? "Resume" : "Pause";
  if (!trainState.paused) trainLoop();
}
async function downloadWeights() {
  if (!trainState.config) { liveStatus("train first", true); return; }
  const s = await engine.call("seqgrad_live_train_save", "/trained.safetensors", "writing the weights");
  if (s.error) return;
  const r = await engine.call("read", "/trained.safetensors", "reading the weights");
  const a = el("a", { href: URL.createObjectURL(new Blob([r.bytes])), download: "best.safetensors" });
  document.body.append(a); a.click(); a.remove();
}
addView("train", "Train", "Train a date model in this page", { before: "training" });
