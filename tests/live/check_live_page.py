#!/usr/bin/python3
"""The live page in headless Chromium against the native build (ctest live/*, scripts/test.sh).

  check_live_page.py SEQGRAD MODULE_DIR CHROMIUM WORK_DIR [--sentences N] [--train-steps N]

1. trains a date model natively (configs/dates.json, one epoch) into WORK_DIR/run;
2. writes `seqgrad explore RUN --live` with the first N test sentences (default 100);
3. opens it from file:// (no network) at #check=translate,saliency and compares:
   - the page's greedy and beam tokens with `seqgrad translate --trace` (beam 1 and the page's
     beam), sentence by sentence: equal;
   - the attention and the saliency (gradient norm, gradient x input) of the first three
     sentences with `seqgrad saliency --csv`: equal to 1e-4 relative (of the row's largest);
   - a typed hostile sentence (#live=...) is decoded and shown as text, an over-long one refused
     with a message, and nothing was fetched;
4. opens #view=train&autostart=1&steps=N and checks that the loss fell;
5. writes the page again with --live-weights f16 (the first 20 sentences) and checks that the
   page's greedy and beam tokens equal `seqgrad translate`'s with the page's own F16 weights (taken
   out of the file), and that the count of sentences the command said differ from float32 is right.
Exits non-zero on the first failure, saying what differed.
"""
import argparse
import base64
import csv
import json
import os
import subprocess
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
HOSTILE = "</script><script>alert(1)</script> <b>&amp; 3 may 1999"


def run(command, **kw):
    result = subprocess.run(command, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        sys.exit("failed: {}\n{}{}".format(" ".join(command), result.stdout, result.stderr))
    return result.stdout


def fail(message):
    sys.exit("FAIL: " + message)


def open_page(chromium, url, until, timeout):
    # an engine that did not start (liveTest.ready false) ends the wait at once
    until = "(typeof liveTest !== 'undefined' && liveTest.ready === false) || ({})".format(until)
    out = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "chromium_pipe.py"), chromium, url,
                          until, str(timeout)], capture_output=True, text=True)
    if not out.stdout.strip():
        fail("the browser gave nothing: " + out.stderr[-2000:])
    page = json.loads(out.stdout)
    live = page.get("selftest", {}).get("live", {})
    if live.get("ready") is False:
        fail("the engine did not start in the page: {}".format(live.get("errors")))
    if page["timed_out"]:
        fail("the page did not finish in {} s: {}".format(timeout, json.dumps(page)[:3000]))
    return page


def trace_tokens(seqgrad, run_dir, sources_file, beam, work, checkpoint="best"):
    trace = os.path.join(work, "trace-{}-{}.jsonl".format(checkpoint, beam))
    run([seqgrad, "translate", run_dir, "--input", sources_file, "--beam", str(beam), "--trace", trace,
         "--checkpoint", checkpoint])
    with open(trace) as f:
        return [json.loads(line)["nbest"][0]["tokens"] if json.loads(line).get("nbest") else []
                for line in f if line.strip()]


def page_blocks(path):
    """The page's data block and its live block, as JSON."""
    text = open(path, encoding="utf-8").read()
    blocks = []
    for tag in ('<script id="seqgrad-data" type="application/json">',
                '<script id="seqgrad-live" type="application/json">'):
        start = text.index(tag) + len(tag)
        blocks.append(json.loads(text[start:text.index("</script>", start)]))
    return text, blocks[0], blocks[1]


def check_half_weights(a, run_dir, env):
    """5. The page with F16 weights decodes as the native build does with the same weights."""
    page_path = os.path.join(a.work, "live-f16.html")
    said = run([a.seqgrad, "explore", run_dir, "--live", "--live-module", a.module_dir,
                "--live-weights", "f16", "--limit", "20", "--no-gradients", "--what-if-steps", "0",
                "--out", page_path], env=env)
    _, data, live = page_blocks(page_path)
    if live["weights_dtype"] != "F16":
        fail("--live-weights f16 wrote {} weights".format(live["weights_dtype"]))
    half_run = os.path.join(a.work, "run")  # the page's weights as another checkpoint of the run
    with open(os.path.join(half_run, "half.safetensors"), "wb") as f:
        f.write(base64.b64decode(live["files"]["best.safetensors"]))
    sources = [s["source"] for s in data["sentences"]]
    beam = data["meta"]["beam_size"]
    sources_file = os.path.join(a.work, "sources-f16.txt")
    with open(sources_file, "w") as f:
        f.write("\n".join(sources) + "\n")
    page = open_page(a.chromium, "file://{}#check=translate".format(page_path),
                     "typeof liveTest !== 'undefined' && liveTest.checks_done", 600)
    ours = page["selftest"]["live"]["translate"]
    differ = set()
    for name, width, precomputed in (("greedy", 1, "greedy"), ("beam", beam, "nbest")):
        native = trace_tokens(a.seqgrad, half_run, sources_file, width, a.work, "half")
        if native != ours[name]:
            fail("F16 weights, {}: native {} page {}".format(name, native, ours[name]))
        for i, s in enumerate(data["sentences"]):  # the file's own tokens come from float32
            f32 = s[precomputed]["tokens"] if name == "greedy" else s[precomputed][0]["tokens"]
            if f32 != native[i]:
                differ.add(i)
    expected = "the {} precomputed sentences decode to the same tokens".format(len(sources)) if not differ \
        else "{} of the {} precomputed sentences decode to other tokens".format(len(differ), len(sources))
    if expected not in said:
        fail("explore --live-weights f16 said {!r}; expected {!r}".format(said, expected))
    print("F16 weights: {} sentences, greedy and beam {} equal to native with the same weights; "
          "{} differ from float32, as the command said".format(len(sources), beam, len(differ)))


def close(a, b, scale):
    return abs(a - b) <= 1e-4 * max(scale, 1e-12)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("seqgrad")
    p.add_argument("module_dir")
    p.add_argument("chromium")
    p.add_argument("work")
    p.add_argument("--sentences", type=int, default=100)
    p.add_argument("--train-steps", type=int, default=60)
    a = p.parse_args()
    a.module_dir = os.environ.get("SEQGRAD_LIVE_MODULE") or a.module_dir
    if not os.path.exists(os.path.join(a.module_dir, "seqgrad_live.wasm")):
        print("[seqgrad-skip] no WebAssembly engine in {} (docs/live.md: emcmake cmake -S . -B "
              "build-wasm -DSEQGRAD_WASM=ON && cmake --build build-wasm)".format(a.module_dir))
        return 0
    if not os.path.exists(a.chromium):
        print("[seqgrad-skip] no Chromium at " + a.chromium)
        return 0
    os.makedirs(a.work, exist_ok=True)
    run_dir = os.path.join(a.work, "run")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    if not os.path.exists(os.path.join(run_dir, "best.safetensors")):
        run([a.seqgrad, "train", os.path.join(SOURCE, "configs/dates.json"), "--quiet",
             "--set", "output.run_dir=" + run_dir, "--set", "train.epochs=1"], env=env)
    page_path = os.path.join(a.work, "live.html")
    run([a.seqgrad, "explore", run_dir, "--live", "--live-module", a.module_dir, "--limit",
         str(a.sentences), "--gradient-sentences", "2", "--ig-sentences", "1", "--tape-sentences",
         "1", "--out", page_path], env=env)
    text = open(page_path, encoding="utf-8").read()
    if "http://" in text or "https://" in text:
        fail("the live page holds a URL")
    start = text.index('<script id="seqgrad-data" type="application/json">') + len('<script id="seqgrad-data" type="application/json">')
    data = json.loads(text[start:text.index("</script>", start)])
    sources = [s["source"] for s in data["sentences"]]
    beam = data["meta"]["beam_size"]
    sources_file = os.path.join(a.work, "sources.txt")
    with open(sources_file, "w") as f:
        f.write("\n".join(sources) + "\n")

    # 3. the same tokens, attention and saliency as the native build
    url = "file://{}#check=translate,saliency&live={}".format(page_path, urllib.parse.quote(HOSTILE))
    page = open_page(a.chromium, url, "typeof liveTest !== 'undefined' && liveTest.checks_done && liveTest.decoded.length > 0", 600)
    t = page["selftest"]
    # the worker's script is a blob: URL of the page's own text (no request leaves the page)
    t["resources"] = [r for r in t["resources"] if not r.startswith("blob:")]
    if t["problems"] or t["resources"] or t["alerts"]:
        fail("page problems {}, requests {}, alerts {}".format(t["problems"], t["resources"], t["alerts"]))
    live = t["live"]
    for name, width in (("greedy", 1), ("beam", beam)):
        native = trace_tokens(a.seqgrad, run_dir, sources_file, width, a.work)
        ours = live["translate"][name]
        for i, (x, y) in enumerate(zip(native, ours)):
            if x != y:
                fail("{} sentence {} ({!r}): native {} page {}".format(name, i, sources[i], x, y))
        if len(native) != len(ours):
            fail("{}: {} native translations, {} in the page".format(name, len(native), len(ours)))
    print("tokens: {} sentences equal, greedy and beam {}".format(len(sources), beam))
    for i, sal in enumerate(live["saliency"]):
        csv_path = os.path.join(a.work, "saliency-{}.csv".format(i))
        run([a.seqgrad, "saliency", run_dir] + sources[i].split(" ") + ["--beam", "1", "--csv", csv_path,
             "--out", os.path.join(a.work, "saliency.svg")])
        rows = list(csv.DictReader(open(csv_path)))
        for key, column in (("grad_norm", "value"), ("grad_input", "value"), ("attention", "attention")):
            values = sal[key]
            for r in rows:
                if column == "value" and r["method"] != key:
                    continue
                step, pos = int(r["step"]) - 1, int(r["source_position"]) - 1
                scale = max(abs(v) for v in values[step])
                if not close(float(r[column]), values[step][pos], scale):
                    fail("sentence {} {} at step {} position {}: native {} page {}".format(
                        i, key, step + 1, pos + 1, r[column], values[step][pos]))
    print("attention and saliency: {} sentences equal to 1e-4".format(len(live["saliency"])))
    typed = live["decoded"][0]
    if typed["source"] != HOSTILE or not typed["beam"]:
        fail("the typed sentence was not decoded: {}".format(typed))
    print("hostile sentence decoded in {} ms, shown as text".format(typed["ms"]))

    long_url = "file://{}#live={}".format(page_path, urllib.parse.quote("1 " * 400))
    page = open_page(a.chromium, long_url, "typeof liveTest !== 'undefined' && liveTest.errors.length > 0", 300)
    if "too long" not in page["selftest"]["live"]["errors"][0]:
        fail("an over-long sentence: " + str(page["selftest"]["live"]["errors"]))
    print("over-long sentence refused: " + page["selftest"]["live"]["errors"][0])

    # 4. training in the page
    train_url = "file://{}#view=train&autostart=1&steps={}".format(page_path, a.train_steps)
    page = open_page(a.chromium, train_url, "typeof liveTest !== 'undefined' && liveTest.train_done", 900)
    losses = page["selftest"]["live"]["losses"]
    if not losses or not losses[-1][1] < 0.8 * losses[0][1]:
        fail("the loss did not fall in the page: {}".format(losses))
    print("training in the page: loss {:.3f} -> {:.3f} in {} steps".format(losses[0][1], losses[-1][1], losses[-1][0]))
    check_half_weights(a, run_dir, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
