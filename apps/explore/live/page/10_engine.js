// ---- live: the engine, compiled to WebAssembly, in a Web Worker --------------------------------
// (`seqgrad explore --live`; apps/explore/live/live_page.cpp puts these scripts, the engine and the
// run's files into the page.) The worker is made from a Blob of text held in this file (the
// engine's JavaScript glue, then WORKER_MAIN), so it starts from file:// with no request; the
// module is instantiated from the bytes in the page (wasmBinary), never fetched. Every call is
// one JSON string in and one out (apps/explore/live/live_api.cpp).
const LIVE = JSON.parse(document.getElementById("seqgrad-live").textContent);
// the URL fragment as the file was opened (the page's start rewrites it: #sentence=..&view=..)
const LIVE_HASH = new URLSearchParams(location.hash.slice(1));
const liveTest = { calls: 0, errors: [], decoded: [], forced: [], train: [] };  // for the test hook
function fromBase64(text) {
  const bin = atob(text), bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}
// The engine's bytes, gunzipped when the file holds them compressed (LIVE.gzip): the browser's
// own DecompressionStream, no request.
async function engineBytes(text) {
  const bytes = fromBase64(text);
  if (!LIVE.gzip) return bytes;
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
const WORKER_MAIN = `
let M = null;
onmessage = async e => {
  const { id, fn, arg, init } = e.data;
  try {
    if (init) {
      M = await SeqgradLive({ wasmBinary: init.wasm, print: () => {}, printErr: () => {} });
      M.FS.mkdir("/run");
      for (const [name, bytes] of Object.entries(init.files)) M.FS.writeFile("/run/" + name, bytes);
      postMessage({ id, result: JSON.parse(M.ccall("seqgrad_live_load", "string", ["string"], ["/run"])) });
    } else if (fn === "read") {
      const bytes = M.FS.readFile(arg);
      postMessage({ id, result: { bytes } }, [bytes.buffer]);
    } else {
      const t0 = performance.now();
      const out = M.ccall(fn, "string", [typeof arg === "number" ? "number" : "string"], [arg]);
      const result = JSON.parse(out);
      result.ms = performance.now() - t0;
      postMessage({ id, result });
    }
  } catch (err) {
    postMessage({ id, result: { error: String((err && err.message) || err) } });
  }
};`;
const engine = (() => {
  const waiting = new Map();
  let next = 0, busy = 0;
  // the worker, once its glue is unpacked; `posting` keeps the messages in the order of the calls
  let posting = (async () => {
    const glue = new TextDecoder().decode(await engineBytes(LIVE.glue));
    const url = URL.createObjectURL(new Blob([glue, "\n", WORKER_MAIN], { type: "text/javascript" }));
    const worker = new Worker(url);
    worker.onmessage = e => { const done = waiting.get(e.data.id); waiting.delete(e.data.id); done(e.data.result); };
    worker.onerror = e => { problems.push("worker: " + e.message); liveStatus("the engine stopped: " + e.message, true); };
    return worker;
  })();
  // call(fn, arg, what): a promise of fn's answer; `what` is shown while it runs
  function call(fn, arg, what) {
    const id = next++, t0 = performance.now();
    busy++; liveStatus(`running: ${what}\u2026`);
    liveTest.calls++;
    return new Promise(resolve => {
      waiting.set(id, result => {
        busy--;
        const ms = Math.round(performance.now() - t0);
        if (result.error) { liveTest.errors.push(result.error); liveStatus(`${what}: ${result.error}`, true); }
        else if (!busy) liveStatus(`${what}: done in ${ms} ms`);
        result.wall_ms = ms;
        resolve(result);
      });
      posting = posting.then(async worker => {
        if (fn === "init") {
          const files = {};
          for (const [name, text] of Object.entries(LIVE.files)) files[name] = fromBase64(text);
          worker.postMessage({ id, init: { wasm: await engineBytes(LIVE.wasm), files } });
        } else {
          worker.postMessage({ id, fn, arg });
        }
        return worker;
      }).catch(err => { waiting.delete(id); busy--; resolve({ error: "the engine did not start: " + err }); return Promise.reject(err); });
    });
  }
  return { call, ready: call("init", null, "starting the engine") };
})();
function liveStatus(text, error = false) {
  const box = document.getElementById("live-status");
  if (!box) return;
  box.textContent = text;
  box.classList.toggle("neg", error);
}
