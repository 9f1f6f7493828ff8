#!/usr/bin/python3
"""Opens a page in headless Chromium and waits for it, over the DevTools protocol on a pipe.

  chromium_pipe.py CHROMIUM URL UNTIL TIMEOUT_SECONDS [SCREENSHOT.png] > selftest.json

Evaluates the JavaScript expression UNTIL in the page every half second until it is true, then
prints the page's test hook (the text of <pre id="selftest">) and the page's console errors as
one JSON object {"selftest": ..., "console": [...]}. A live page works in a Web Worker, so a
one-shot --dump-dom (which may dump before the worker answers) cannot wait for it; the DevTools
pipe (--remote-debugging-pipe: JSON messages separated by NUL bytes on file descriptors 3 and 4)
needs no network and no library. Exits 1 on a timeout, printing what the page held then.
With SCREENSHOT.png, also saves the page as it looks then (1400 x 900).
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def main():
    chromium, url, until, timeout = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    screenshot = sys.argv[5] if len(sys.argv) > 5 else None
    profile = tempfile.mkdtemp(prefix="seqgrad_chromium_")
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--remote-debugging-pipe", "--user-data-dir=" + profile, "about:blank"]
    # the browser reads commands on its fd 3 and writes answers on its fd 4
    command = 'exec "$0" "$@" 3<&{} 4>&{}'.format(to_chrome_r, from_chrome_w)
    browser = subprocess.Popen(["/bin/sh", "-c", command, chromium] + flags,
                               pass_fds=(to_chrome_r, from_chrome_w),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(to_chrome_r)
    os.close(from_chrome_w)
    pending = b""
    next_id = [0]
    console = []

    def send(method, params=None, session=None):
        next_id[0] += 1
        message = {"id": next_id[0], "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(to_chrome_w, json.dumps(message).encode() + b"\0")
        return next_id[0]

    def answer(wanted):
        nonlocal pending
        while True:
            while b"\0" in pending:
                raw, pending = pending.split(b"\0", 1)
                message = json.loads(raw)
                if message.get("method") == "Runtime.consoleAPICalled" and \
                        message["params"].get("type") == "error":
                    console.append(" ".join(str(a.get("value", a.get("description", "")))
                                            for a in message["params"]["args"]))
                if message.get("method") == "Runtime.exceptionThrown":
                    console.append(message["params"]["exceptionDetails"].get("text", ""))
                if message.get("id") == wanted:
                    if "error" in message:
                        raise RuntimeError(json.dumps(message["error"]))
                    return message["result"]
            chunk = os.read(from_chrome_r, 1 << 20)
            if not chunk:
                raise RuntimeError("the browser closed the pipe")
            pending += chunk

    def evaluate(session, expression):
        result = answer(send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                             session))
        return result["result"].get("value")

    status = 1
    try:
        target = answer(send("Target.createTarget", {"url": "about:blank"}))["targetId"]
        session = answer(send("Target.attachToTarget", {"targetId": target, "flatten": True}))["sessionId"]
        answer(send("Runtime.enable", {}, session))
        answer(send("Page.enable", {}, session))
        answer(send("Emulation.setDeviceMetricsOverride",
                    {"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session))
        answer(send("Page.navigate", {"url": url}, session))
        deadline = time.time() + timeout
        while time.time() < deadline:
            if evaluate(session, "(() => { try { return !!(%s); } catch (e) { return false; } })()" % until):
                status = 0
                break
            time.sleep(0.5)
        if screenshot:
            shot = answer(send("Page.captureScreenshot", {"format": "png"}, session))
            with open(screenshot, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        # the hook as of now (the page refreshes it after each step; once more, to be sure)
        selftest = evaluate(session, "(() => { let e = ''; try { if (typeof selftest === 'function') selftest(); } "
                                     "catch (x) { e = String(x); } const n = document.getElementById('selftest'); "
                                     "const t = n ? JSON.parse(n.textContent || 'null') : null; "
                                     "if (t && e) t.problems.push('selftest: ' + e); return JSON.stringify(t); })()")
        print(json.dumps({"selftest": json.loads(selftest) if selftest else None, "console": console,
                          "timed_out": status != 0}))
    finally:
        try:
            send("Browser.close")
        except OSError:
            pass
        try:
            browser.wait(timeout=20)
        except subprocess.TimeoutExpired:
            browser.kill()
        shutil.rmtree(profile, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
