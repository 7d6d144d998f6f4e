#!/usr/bin/env python3
"""Checks the web demo in headless Chromium through chromedriver (WebDriver over HTTP, the
standard library only): opens the page, waits for it to pad in every mode, checks that every
mode's GPU output equals the wasm CPU path's byte for byte and has the padded size, and saves
a screenshot.

    check_demo.py URL SCREENSHOT.png   (chromedriver at $CHROMEDRIVER, or on the PATH)
"""
import base64, json, os, shutil, socket, subprocess, sys, time, urllib.request

url, screenshot = sys.argv[1], sys.argv[2]
driver = os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver")
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
proc = subprocess.Popen([driver, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def call(method, path, body=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.load(r)["value"]


try:
    for _ in range(100):
        try:
            call("GET", "/status")
            break
        except OSError:
            time.sleep(0.1)
    args = ["--enable-unsafe-webgpu", "--no-sandbox", "--headless=new", "--use-webgpu-adapter=swiftshader",
            "--window-size=1400,1100"]
    session = call("POST", "/session", {"capabilities": {"alwaysMatch": {"goog:chromeOptions": {"args": args}}}})
    sid = session["sessionId"]
    call("POST", f"/session/{sid}/url", {"url": url})
    result = None
    for _ in range(600):
        result = call("POST", f"/session/{sid}/execute/sync", {"script": "return window.demoResult ?? null", "args": []})
        if result is not None:
            break
        time.sleep(0.2)
    with open(screenshot, "wb") as f:
        f.write(base64.b64decode(call("GET", f"/session/{sid}/screenshot")))
    call("DELETE", f"/session/{sid}")
finally:
    proc.terminate()

if result is None or "error" in result:
    sys.exit(f"demo: the page did not finish: {result}")
print(f"demo: adapter: {result['adapter']}")
# An empty result (no adapter, no modes) would pass the loop below: require every mode the
# crate has (the page's `all`, Mode::ALL: the five at least), on a GPU.
expected = set(result.get("all") or [])
if not result.get("adapter") or len(expected) < 5 or set(result["modes"]) != expected:
    sys.exit(f"demo: expected every mode on a WebGPU adapter, got adapter {result.get('adapter')!r}, modes {sorted(result['modes'])}")
failed = 0
for mode, r in result["modes"].items():
    cpu = base64.b64decode(r["cpu"])
    gpu = base64.b64decode(r["gpu"]) if r["gpu"] else None
    size_ok = len(cpu) == result["width"] * result["height"] * 4
    ok = gpu == cpu and size_ok
    failed += not ok
    gpu_ms = f"{r['gpuMs']:.2f} ms" if r["gpuMs"] is not None else f"failed ({r['error']})"
    print(f"demo: {mode:9} {result['width']}x{result['height']} GPU {gpu_ms}, CPU {r['cpuMs']:.2f} ms, "
          f"GPU bytes equal CPU bytes: {'yes' if ok else 'NO'}")
print(f"demo: screenshot at {screenshot}")
sys.exit(1 if failed else 0)
