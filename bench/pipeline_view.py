"""The pipeline view at its largest: 40 AI Cores x 4 pipe lanes x 1,500 segments (the most the
server sends per lane) drawn by `resources/web/js/live/pipeline.js` in Debian's Chromium. The
page's static files are served as they are; the one API answer is fulfilled by Playwright with
a timeline of that size (the figures are layout load, not cycles anybody measured).

Prints, per repetition: open (fetch + parse + draw), a redraw alone, and one pointer readout.
Run: uv run python bench/pipeline_view.py [--cores 40] [--segments 1500] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "resources" / "web"
CHROMIUM = "/usr/bin/chromium"
PIPES = ("MTE2", "V", "MTE3", "S")

MEASURE = """async () => {
  const m = await import('/js/live/pipeline.js');
  m.closePipeline();
  const t0 = performance.now();
  await m.openPipeline('bench', 'a'.repeat(64));
  const t1 = performance.now();
  const c = document.querySelector('canvas.pipeline-chart');
  const box = c.getBoundingClientRect();
  const move = new MouseEvent('mousemove', { clientX: box.left + 400, clientY: box.top + 300 });
  const t2 = performance.now();
  for (let i = 0; i < 100; i += 1) c.dispatchEvent(move);
  const t3 = performance.now();
  c.width = 0;  // force the redraw below to start from nothing
  const t4 = performance.now();
  m.redrawPipeline();
  const t5 = performance.now();
  return { open: t1 - t0, hover: (t3 - t2) / 100, redraw: t5 - t4, segments: c.dataset.segments };
}"""


def answer(cores: int, segments: int, total: int = 4_000_000) -> str:
    width = total // segments
    core_list: list[dict[str, Any]] = []
    for core in range(cores):
        lanes = []
        for pipe in PIPES:
            flat: list[int] = []
            for i in range(segments):
                flat += [i * width, (i + 1) * width, width * ((i + core) % 7) // 7]
            lanes.append(
                {
                    "pipe": pipe,
                    "busy": sum(flat[2::3]),
                    "events": segments,
                    "intervals": segments,
                    "downsampled": True,
                    "segments": flat,
                    "utilisation": sum(flat[2::3]) / total,
                }
            )
        core_list.append({"core": core, "name": f"core {core}", "makespan": total, "lanes": lanes})
    pipeline = {"model": "bench", "soc": "bench", "total": total, "bound_pipe": "MTE2"}
    body = {
        "run_id": "bench",
        "receipt": "a" * 64,
        "case": "bench",
        "cases": [{"case_id": "bench", "pipeline": pipeline}],
        "max_segments": segments,
        "pipeline": {**pipeline, "block_dim": cores, "pipes": {}, "cores": []},
        "timeline": {
            "total": total,
            "unit": "cycles",
            "clock_mhz": None,
            "max_segments": segments,
            "downsampled": True,
            "bucket_cycles": width,
            "events": 0,
            "cores": core_list,
        },
    }
    return json.dumps(body, separators=(",", ":"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=40)
    parser.add_argument("--segments", type=int, default=1500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    text = answer(args.cores, args.segments)
    print(f"answer: {len(text):,} bytes, {args.cores * 4 * args.segments:,} segments")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "-b", "127.0.0.1", "-d", str(WEB)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(1)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page(viewport={"width": 1440, "height": 880})
            page.route(
                "**/api/**",
                lambda route: route.fulfill(status=200, content_type="application/json", body=text),
            )
            page.goto(f"http://127.0.0.1:{port}/js/dom.js")
            for _ in range(args.repeat):
                r = page.evaluate(MEASURE)
                print(
                    f"open {r['open']:7.1f} ms   redraw {r['redraw']:6.1f} ms   "
                    f"pointer {r['hover'] * 1000:6.1f} µs   drawn {r['segments']}"
                )
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
