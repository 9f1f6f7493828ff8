// The live page's engine under node, without a browser: training steps per second of the date
// model and decode latency, timed inside one process (bench/live_page.sh runs it; docs/live.md).
//   node bench/live_node.js WASM_DIR CONFIG.json [STEPS] [RUN_DIR]
// WASM_DIR holds seqgrad_live.js and seqgrad_live.wasm. Prints one JSON object.
const fs = require("fs");
const path = require("path");
const [wasmDir, configPath, stepsText, runDir] = process.argv.slice(2);
const SeqgradLive = require(path.resolve(wasmDir, "seqgrad_live.js"));
(async () => {
  const M = await SeqgradLive({
    wasmBinary: fs.readFileSync(path.resolve(wasmDir, "seqgrad_live.wasm")),
    print: () => {}, printErr: () => {},
  });
  const call = (fn, arg) => {
    const t0 = process.hrtime.bigint();
    const out = JSON.parse(M.ccall(fn, "string", [typeof arg === "number" ? "number" : "string"], [arg]));
    if (out.error) throw new Error(fn + ": " + out.error);
    out.ms = Number(process.hrtime.bigint() - t0) / 1e6;
    return out;
  };
  const result = {};
  const config = JSON.parse(fs.readFileSync(configPath, "utf8"));
  call("seqgrad_live_train_start", JSON.stringify(config));
  call("seqgrad_live_train_steps", 3);  // warm-up: first allocations, JIT tiers
  const steps = Number(stepsText || 40);
  const t = call("seqgrad_live_train_steps", steps);
  result.train_steps = steps;
  result.train_steps_per_second = steps / (t.ms / 1000);
  if (runDir) {
    M.FS.mkdir("/run");
    for (const name of fs.readdirSync(runDir)) {
      const file = path.join(runDir, name);
      if (fs.statSync(file).isFile()) M.FS.writeFile("/run/" + name, fs.readFileSync(file));
    }
    call("seqgrad_live_load", "/run");
  }
  console.log(JSON.stringify(result));
})().catch(e => { console.error(String(e)); process.exit(1); });
