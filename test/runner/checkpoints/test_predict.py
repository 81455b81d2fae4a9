"""`predict` with the conftest's trained task-A run: the right top-1 for most new images of its
classes, softmax probabilities that sum to 1, and broken or unreadable files as errors of their own
entries, never of the batch."""

from __future__ import annotations

import io
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from ascend_finetune.data.demo import CLASSES, make_shapes


def cli(*args: str, cwd: Path | None = None, timeout: float = 300) -> tuple[int, dict, str]:
    """(exit code, the one JSON object on stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"))
    r = subprocess.run(
        [sys.executable, "-m", "ascend_finetune", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
    )
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, f"one JSON object expected on stdout, got {r.stdout!r} (stderr {r.stderr[-2000:]!r})"
    return r.returncode, json.loads(lines[0]), r.stderr


def best_ckpt(run: Path) -> Path:
    entries = json.loads((run / "checkpoints.json").read_text())
    return run / next(e for e in reversed(entries) if e["best"])["file"]


@pytest.fixture
def run_copy(run_a, tmp_path) -> Path:
    """The shared task-A run's files that predict and eval read, copied (eval writes next to the checkpoint)."""
    dst = tmp_path / "run"
    (dst / "checkpoints").mkdir(parents=True)
    for name in ("spec.json", "classes.json", "checkpoints.json"):
        shutil.copy(run_a / name, dst / name)
    ck = best_ckpt(run_a)
    shutil.copy(ck, dst / "checkpoints" / ck.name)
    return dst


def test_predict_knows_new_images_of_the_runs_classes_and_isolates_broken_files(run_copy, tmp_path):
    from PIL import Image

    new = tmp_path / "new"
    make_shapes(str(new), per_class=5, size=32, seed=77)  # images the run never saw
    files, truth = [], []
    for cls in sorted(CLASSES):
        for p in sorted((new / cls).iterdir()):
            files.append(str(p))
            truth.append(cls)
    weird = tmp_path / "$(touch x) \"q' s.png"  # shell syntax in a file name
    shutil.copy(files[0], weird)
    buf = io.BytesIO()
    Image.new("RGB", (32, 32), (200, 10, 10)).save(buf, "JPEG")
    (tmp_path / "trunc.jpg").write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    (tmp_path / "text.jpg").write_text("not a picture")
    os.mkfifo(tmp_path / "fifo.jpg")  # never waited on
    bad = [str(tmp_path / n) for n in ("trunc.jpg", "text.jpg", "missing.jpg", "fifo.jpg")]
    argv = [
        "predict",
        "--ckpt",
        str(best_ckpt(run_copy)),
        "--batch-size",
        "8",
        *bad[:2],
        *files,
        str(weird),
        *bad[2:],
    ]
    code, out, err = cli(*argv, cwd=tmp_path)
    assert code == 0, (out, err[-2000:])
    assert not (tmp_path / "x").exists()
    preds = out["predictions"]
    assert [p["file"] for p in preds] == [*bad[:2], *files, str(weird), *bad[2:]], "one entry per FILE, in order"
    assert out["classes"] == sorted(CLASSES) and out["run_dir"] == str(run_copy), "--run found from the checkpoint"
    assert (out["ok"], out["failed"]) == (21, 4)
    errors = {Path(p["file"]).name: p["error"] for p in preds if "error" in p}
    assert {k: v["kind"] for k, v in errors.items()} == {
        "trunc.jpg": "not_an_image",
        "text.jpg": "not_an_image",
        "missing.jpg": "unreadable",
        "fifo.jpg": "unreadable",
    }
    good = [p for p in preds if "top" in p]
    for p in good:
        assert len(p["top"]) == 4, "top-5, or every class when there are fewer"
        assert math.isclose(sum(t["prob"] for t in p["top"]), 1.0, abs_tol=1e-5)
        assert [t["prob"] for t in p["top"]] == sorted((t["prob"] for t in p["top"]), reverse=True)
        assert {t["class"] for t in p["top"]} == set(CLASSES)
    # The run's own preprocessing and network: the same answers as `eval` on the same images.
    right = sum(p["top"][0]["class"] == t for p, t in zip(good, truth))
    code, ev, err = cli("eval", "--run", str(run_copy), "--ckpt", str(best_ckpt(run_copy)), "--data", str(new))
    assert code == 0, (ev, err[-2000:])
    assert right == round(ev["accuracy"] * ev["num_images"]) and ev["num_images"] == len(truth)
    # The run is small (4 epochs from scratch, val_acc 0.625 on its 16 validation images).
    assert right > len(truth) / 2, f"top-1 right for {right} of {len(truth)}"
    assert good[-1]["top"] == good[0]["top"], "the copy under a shell-syntax name gets the same answer"


def test_predict_needs_a_run(tmp_path, run_copy):
    ck = tmp_path / "loose.ckpt"
    shutil.copy(best_ckpt(run_copy), ck)
    code, out, _ = cli("predict", "--ckpt", str(ck), str(ck))
    assert code == 2 and out["error"]["kind"] == "not_a_run" and "--run" in out["error"]["message"]
    code, out, _ = cli("predict", "--ckpt", str(tmp_path / "none.ckpt"), "--run", str(run_copy), str(ck))
    assert code == 2 and out["error"]["kind"] == "bad_checkpoint"


@pytest.mark.parametrize("n", [1, 3])
def test_top_k_is_capped_at_five(n):
    import numpy as np

    from ascend_finetune.checkpoints.predict import softmax_top

    classes = [f"c{i}" for i in range(7 * n)]
    top = softmax_top(np.arange(7 * n, dtype=np.float32), classes)
    assert top is not None and [t["class"] for t in top] == [f"c{i}" for i in range(7 * n - 1, 7 * n - 6, -1)]
    assert softmax_top(np.array([0.0, float("nan")]), ["a", "b"]) is None
