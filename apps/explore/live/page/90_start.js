// ---- live: after the page's own start (apps/explore/page/90_main.js) -------------------------
// #live=<URL-encoded sentence> decodes that sentence once the engine is up; #view=train opens the
// Train view, and &autostart=1 starts training (&steps=N stops after N steps: links and tests).
// #check=translate,saliency (the browser test, tests/live/check_live_page.py): decodes every
// sentence of the file greedily and with the file's beam, and the saliency of the first three as
// `seqgrad saliency --csv` computes it, unrounded, into the test hook.
async function runChecks(list) {
  const sources = S.filter(s => !s.live).map(s => s.source);
  const settings = { beam_size: META.beam_size, alpha: META.alpha, length_penalty: META.length_penalty, no_repeat_ngram: 0 };
  if (list.includes("translate"))
    liveTest.translate = await engine.call("seqgrad_live_translate", JSON.stringify({ sources, ...settings }), "decoding the file's sentences");
  if (list.includes("saliency")) {
    liveTest.saliency = [];
    for (const source of sources.slice(0, 3))
      liveTest.saliency.push(await engine.call("seqgrad_live_saliency", JSON.stringify({ source, ...settings, beam_size: 1 }), "saliency"));
  }
  if (list.includes("latency")) {  // bench/live_page.sh: median ms of a few decodes of one sentence
    const source = () => LIVE_HASH.get("sentence_text") || sources[0];
    liveTest.latency = {};
    // one decode first, as the native bench/decode_latency does: the browser compiles the module's
    // hot functions again, optimized, once they have run a while
    await engine.call("seqgrad_live_translate", JSON.stringify({ sources: [source()], ...settings, beam_size: 5 }), "warming up");
    for (const [name, beam] of [["greedy", 1], ["beam5", 5]]) {
      const times = [];
      for (let k = 0; k < 7; k++) {
        const r = await engine.call("seqgrad_live_translate", JSON.stringify({ sources: [source()], ...settings, beam_size: beam }), "timing");
        times.push(1000 * (beam === 1 ? r.greedy_seconds : r.beam_seconds));
      }
      times.sort((x, y) => x - y);
      liveTest.latency[name] = times[3];
    }
  }
  liveTest.checks_done = true;
  selftest();
}
engine.ready.then(r => {
  if (r.error) { liveTest.ready = false; selftest(); return; }
  liveTest.ready = true;
  const p = LIVE_HASH;
  liveStatus(`engine ready (${r.parameters} parameters, ${r.wall_ms} ms to start)`);
  if (p.has("check")) runChecks(p.get("check").split(","));
  if (p.has("live")) decodeLive(p.get("live"));
  if (p.get("view") === "train") {
    if (p.has("steps")) trainState.maxSteps = Math.max(1, parseInt(p.get("steps"), 10) || 1);
    if (p.has("autostart")) startTraining();
  }
  selftest();
});
renderTrain();
