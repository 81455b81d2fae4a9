"""How long `preview` takes on a large folder, and how big its answer is.

Makes N small JPEGs (default 20,000: 10 classes of 2,000, 64x64, a few KB each) in a temporary
folder, then times, in separate processes (each with a fresh scan cache where it says so):

  1. the bare scan (folder.scan: list + Pillow decode of every file), cold cache: the baseline;
  2. `preview DIR` with the same cold cache (it scans, then hashes and reads every header, then
     makes the thumbnails);
  3. `preview DIR` again, the scan verdicts now cached (what a second preview costs).

Prints one JSON line: the times, the ratio of the cold preview to the bare scan, the bytes of the
preview's JSON, its progress lines, and the machine's cores. Deletes the folder afterwards.

Usage: .venv/bin/python bench/preview.py [--images N] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = os.path.join(ROOT, "runner")


def make(root: str, n: int, classes: int = 10) -> None:
    import random

    from PIL import Image, ImageDraw

    rng = random.Random(0)
    for c in range(classes):
        os.makedirs(os.path.join(root, f"class{c:02d}"))
    for i in range(n):
        c = i % classes
        im = Image.new("RGB", (64, 64), tuple(rng.randint(0, 90) for _ in range(3)))
        ImageDraw.Draw(im).ellipse([8, 8, 56, 56], fill=(25 * c, 255 - 25 * c, rng.randint(0, 255)))
        im.save(os.path.join(root, f"class{c:02d}", f"{i:06d}.jpg"), quality=85)


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.monotonic()
    r = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
    return time.monotonic() - t0, r.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=20000)
    ap.add_argument("--keep", action="store_true", help="keep the generated folder")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="aft-bench-preview-")
    data = os.path.join(work, "data")
    try:
        t0 = time.monotonic()
        make(data, a.images)
        make_s = time.monotonic() - t0
        env = dict(os.environ, PYTHONPATH=RUNNER, ASCEND_FINETUNE_CACHE=os.path.join(work, "cache-scan"))
        workers = str(os.cpu_count() or 1)
        scan_code = (
            "import sys; from ascend_finetune.data.folder import scan; "
            f"s = scan(sys.argv[1], {workers}); print(len(s.samples))"
        )
        scan_s, _ = timed([sys.executable, "-c", scan_code, data], env)
        env["ASCEND_FINETUNE_CACHE"] = os.path.join(work, "cache-preview")
        preview = [sys.executable, "-m", "ascend_finetune", "preview", data]
        cold_s, out = timed(preview, env)
        warm_s, _ = timed(preview, env)
        lines = out.splitlines()
        doc = json.loads(lines[-1])
        print(
            json.dumps(
                {
                    "images": a.images,
                    "bytes_on_disk": sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(data) for f in fs),
                    "make_s": round(make_s, 2),
                    "bare_scan_cold_s": round(scan_s, 2),
                    "preview_cold_s": round(cold_s, 2),
                    "preview_warm_s": round(warm_s, 2),
                    "ratio_cold_preview_to_scan": round(cold_s / scan_s, 2),
                    "json_bytes": len(lines[-1].encode()),
                    "thumbnail_bytes": doc["thumbnails"]["bytes"],
                    "thumbnails_shown": doc["thumbnails"]["shown"],
                    "progress_lines": len(lines) - 1,
                    "cpu_count": os.cpu_count(),
                }
            )
        )
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
