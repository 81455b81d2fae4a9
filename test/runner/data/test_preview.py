"""`preview` on made data sets with known properties: counts and split, a 10:1 imbalance, planted
duplicates (within train, and train/val leakage), planted broken files, modes and sizes, thumbnails
that decode and show their class's colour, the byte budget, progress lines, cancel, links out of the
folder, and a class folder whose name is shell syntax."""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from ascend_finetune.data.demo import CLASSES, make_shapes

WEIRD = "$(touch x) \"q' sp"  # a class folder name full of shell syntax
PLANTED = {
    "red circle": CLASSES["red circle"],
    "green square": CLASSES["green square"],
    "blue triangle": CLASSES["blue triangle"],
    WEIRD: CLASSES["yellow cross"],
}


def cli(*args: str, cwd: Path | None = None, timeout: float = 300) -> tuple[int, list[dict], str]:
    """(exit code, every JSON line on stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"))
    r = subprocess.run(
        [sys.executable, "-m", "ascend_finetune", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
    )
    return (
        r.returncode,
        [json.loads(ln) for ln in r.stdout.splitlines() if ln.strip()],
        r.stderr,
    )


def keep(folder: Path, n: int) -> None:
    """Delete all but the first n images of a class folder."""
    for p in sorted(folder.iterdir())[n:]:
        p.unlink()


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    from PIL import Image

    base = tmp_path_factory.mktemp("preview")
    train, val = base / "train", base / "val"
    make_shapes(str(train), per_class=100, size=32, seed=11, classes=PLANTED)
    make_shapes(str(val), per_class=5, size=32, seed=12, classes=PLANTED)
    keep(train / "green square", 9)
    shutil.copy(train / "green square" / "0001.png", train / "green square" / "copy.png")  # 10: 10:1 with red
    keep(train / "blue triangle", 28)
    Image.new("L", (40, 20), 128).save(train / "blue triangle" / "gray.png")
    Image.new("RGBA", (64, 48), (40, 80, 220, 128)).save(train / "blue triangle" / "rgba.png")
    keep(train / WEIRD, 30)
    shutil.copy(train / "red circle" / "0003.png", val / "red circle" / "leak.png")  # train/val leakage
    buf = io.BytesIO()
    Image.new("RGB", (32, 32), (200, 10, 10)).save(buf, "JPEG")
    (train / "blue triangle" / "trunc.jpg").write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    (train / "blue triangle" / "text.jpg").write_text("not a picture")
    (train / "blue triangle" / "notes.txt").write_text("not an image")
    (base / "spec.json").write_text(json.dumps({"name": "p", "data": {"train": "elsewhere", "image_size": 32}}))
    (base / "elsewhere").mkdir()
    return base


@pytest.fixture(scope="module")
def doc(planted, tmp_path_factory) -> dict:
    cwd = tmp_path_factory.mktemp("cwd")
    code, lines, err = cli(
        "preview",
        str(planted / "train"),
        "--val",
        str(planted / "val"),
        "--spec",
        str(planted / "spec.json"),
        cwd=cwd,
    )
    assert code == 0, (lines, err[-2000:])
    assert len(lines) == 1, "a small set gets no progress lines"
    assert not (cwd / "x").exists(), "a class name is never run by a shell"
    return lines[0]


def test_counts_split_imbalance_and_tiny_classes(doc, planted):
    by = {c["name"]: c for c in doc["classes"]}
    assert [c["name"] for c in doc["classes"]] == sorted(PLANTED)
    assert {k: (v["train"], v["val"]) for k, v in by.items()} == {
        "red circle": (100, 6),
        "green square": (10, 5),
        "blue triangle": (30, 5),
        WEIRD: (30, 5),
    }
    assert (doc["num_train"], doc["num_val"]) == (170, 21)
    assert doc["val"] == str(planted / "val") and doc["val_split"] is None and doc["image_size"] == 32
    assert doc["imbalance"]["ratio"] == pytest.approx(10.0)
    assert doc["imbalance"]["largest"] == {"class": "red circle", "train": 100}
    assert doc["imbalance"]["smallest"] == {"class": "green square", "train": 10}
    hint = doc["imbalance"]["hint"]  # the imbalance knobs of issue 19, by their spec fields
    assert "10.0:1" in hint and 'data.sampling to "balanced"' in hint and 'train.class_weights to "auto"' in hint
    assert doc["tiny"] == {"threshold": 20, "classes": ["green square"]}


def test_duplicates_within_train_and_leaks_into_val(doc, planted):
    dup = doc["duplicates"]
    assert dup["within_train"] == {"groups": 1, "extra_files": 1}
    assert dup["train_val"] == {"groups": 1, "val_files": 1}
    assert dup["conflicting_labels"] == 0 and dup["left_out"] == 0
    leak, within = dup["groups"]  # leaks first
    assert leak["train"] == [
        {
            "file": str(planted / "train" / "red circle" / "0003.png"),
            "class": "red circle",
        }
    ]
    assert leak["val"] == [
        {
            "file": str(planted / "val" / "red circle" / "leak.png"),
            "class": "red circle",
        }
    ]
    assert {m["file"] for m in within["train"]} == {
        str(planted / "train" / "green square" / n) for n in ("0001.png", "copy.png")
    }


def test_broken_files_are_listed_with_the_scans_reasons(doc, planted):
    sk = doc["skipped"]
    reasons = {Path(s["path"]).name: s["reason"] for s in sk["first"]}
    assert sk["count"] == 3 and set(reasons) == {"trunc.jpg", "text.jpg", "notes.txt"}
    assert reasons["notes.txt"] == "not an image file (extension)"
    assert reasons["text.jpg"].startswith("UnidentifiedImageError")
    assert reasons["trunc.jpg"].startswith("OSError") and "runcated" in reasons["trunc.jpg"], reasons["trunc.jpg"]
    assert sum(sk["by_reason"].values()) == 3 and sk["by_reason"]["not an image file (extension)"] == 1
    assert doc["not_read"] == {"count": 0, "first": []}


def test_sizes_and_modes_come_from_the_headers(doc):
    im = doc["images"]
    assert im["count"] == 191
    assert im["modes"] == {"L": 1, "RGB": 189, "RGBA": 1} and im["formats"] == {"PNG": 191}
    assert (im["grayscale"], im["alpha"]) == (1, 1)
    assert im["width"] == {"min": 32, "p5": 32, "p50": 32, "p95": 32, "max": 64}
    assert im["height"]["min"] == 20 and im["height"]["max"] == 48 and im["height"]["p50"] == 32


def decode(b64: str):
    from PIL import Image

    im = Image.open(io.BytesIO(base64.b64decode(b64)))
    im.load()
    assert im.format == "JPEG" and max(im.size) <= 96
    return im.convert("RGB")


def colour_of(im) -> str:
    """The class whose colour is nearest the mean of the bright (shape) pixels."""
    import numpy as np

    px = np.asarray(im, dtype=np.float64).reshape(-1, 3)
    bright = px[px.max(axis=1) > 120]
    assert len(bright), "no shape pixels"
    mean = bright.mean(axis=0)
    return min(PLANTED, key=lambda k: sum((a - b) ** 2 for a, b in zip(PLANTED[k][1], mean)))


def test_thumbnails_decode_and_show_their_class(doc, planted):
    th = doc["thumbnails"]
    assert th["max_px"] == 96 and th["left_out"] == 0 and th["shown"] == 16
    assert [c["class"] for c in th["classes"]] == sorted(PLANTED)
    total = 0
    for c in th["classes"]:
        assert len(c["samples"]) == 4
        for s in c["samples"]:
            assert Path(s["file"]).parent.name == c["class"] and Path(s["file"]).is_relative_to(planted / "train")
            for view in ("original", "train", "eval"):
                total += len(s[view])
                decode(s[view])
            if Path(s["file"]).name in ("gray.png", "rgba.png"):
                continue
            assert colour_of(decode(s["original"])) == c["class"], s["file"]
            assert colour_of(decode(s["eval"])) == c["class"], s["file"]
    assert th["bytes"] == total <= th["max_bytes"] == 1 << 20


def test_the_byte_budget_holds_and_says_what_was_left_out(planted):
    code, lines, err = cli("preview", str(planted / "train"), "--samples", "3", "--max-bytes", "20000")
    assert code == 0, err[-2000:]
    th = lines[-1]["thumbnails"]
    sizes = [len(s[v] or "") for c in th["classes"] for s in c["samples"] for v in ("original", "train", "eval")]
    assert 0 < th["bytes"] == sum(sizes) <= 20000
    assert th["shown"] + th["left_out"] == 12 and th["left_out"] > 0
    shown = [len(c["samples"]) for c in th["classes"]]
    assert max(shown) - min(shown) <= 1, "round-robin over the classes: every class shows one before any shows two"
    assert lines[-1]["val_split"] == 0.1 and lines[-1]["num_val"] > 0, "no --val: the default split"


def test_no_thumbnails_without_samples(planted):
    code, lines, _ = cli("preview", str(planted / "train"), "--samples", "0")
    assert code == 0 and lines[-1]["thumbnails"]["shown"] == 0 and lines[-1]["thumbnails"]["bytes"] == 0


@pytest.fixture(scope="module")
def large(tmp_path_factory) -> Path:
    """1,040 tiny images: above the progress threshold (1,000)."""
    from PIL import Image

    root = tmp_path_factory.mktemp("large") / "set"
    for c, colour in (("a", (200, 0, 0)), ("b", (0, 0, 200))):
        (root / c).mkdir(parents=True)
        for i in range(520):
            Image.new("RGB", (8, 8), (colour[0], i % 256, colour[2])).save(root / c / f"{i:04d}.png")
    return root


def test_progress_lines_come_before_the_document_on_a_large_folder(large):
    code, lines, err = cli("preview", str(large), "--samples", "1")
    assert code == 0, err[-2000:]
    progress = [ln["progress"] for ln in lines[:-1]]
    assert len(progress) >= 2 and all(set(ln) == {"progress"} for ln in lines[:-1])
    assert progress[0] == {"done": 0, "total": 1040} and progress[-1] == {
        "done": 1040,
        "total": 1040,
    }
    assert [p["done"] for p in progress] == sorted(p["done"] for p in progress)
    assert lines[-1]["images"]["count"] == 1040


def test_sigterm_ends_a_preview_promptly_with_a_cancelled_line(large):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ascend_finetune",
            "preview",
            str(large),
            "--samples",
            "8",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    first = json.loads(proc.stdout.readline())
    assert first["progress"]["done"] == 0
    proc.send_signal(signal.SIGTERM)
    t0 = time.monotonic()
    rest, _ = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 5, "cancel is prompt"
    last = json.loads(rest.splitlines()[-1])
    assert proc.returncode == 128 + signal.SIGTERM
    assert last["error"]["kind"] == "cancelled" and last["error"]["signal"] == "SIGTERM"
    assert last["error"]["phase"] in ("read", "thumbnails")


def test_a_link_out_of_the_folder_is_counted_but_never_read(tmp_path):
    root = tmp_path / "set"
    make_shapes(
        str(root),
        per_class=6,
        size=32,
        seed=3,
        classes={k: PLANTED[k] for k in ("red circle", "green square")},
    )
    outside = tmp_path / "secret"
    make_shapes(
        str(outside),
        per_class=1,
        size=32,
        seed=4,
        classes={"x": PLANTED["blue triangle"]},
    )
    (root / "red circle" / "link.png").symlink_to(outside / "x" / "0000.png")
    (root / "green square" / "inside.png").symlink_to(root / "green square" / "0000.png")
    code, lines, err = cli("preview", str(root), "--samples", "10")
    assert code == 0, err[-2000:]
    d = lines[-1]
    assert d["not_read"]["count"] == 1
    assert d["not_read"]["first"][0]["path"] == str(root / "red circle" / "link.png")
    assert "out of the data folder" in d["not_read"]["first"][0]["reason"]
    files = {s["file"] for c in d["thumbnails"]["classes"] for s in c["samples"]}
    assert str(root / "red circle" / "link.png") not in files
    assert d["images"]["count"] == d["num_train"] + d["num_val"] - 1
    assert d["duplicates"]["within_train"]["groups"] + d["duplicates"]["train_val"]["groups"] == 1, "inside link"


def test_bad_folders_are_bad_input(tmp_path):
    code, lines, _ = cli("preview", str(tmp_path / "nope"))
    assert code == 2 and lines[-1]["error"]["kind"] == "bad_input" and lines[-1]["error"]["path"] == "DIR"
    one = tmp_path / "one"
    make_shapes(str(one), per_class=2, size=16, classes={"only": PLANTED["red circle"]})
    code, lines, _ = cli("preview", str(one))
    assert code == 2 and lines[-1]["error"]["kind"] == "bad_input" and "at least 2" in lines[-1]["error"]["message"]


@pytest.fixture(scope="module")
def banded(tmp_path_factory) -> Path:
    """Two classes of 64x48 images: a blue middle between two 8 px red bands at the left and right edges,
    which a centre crop of the shorter side cuts off and a squash keeps."""
    from PIL import Image

    root = tmp_path_factory.mktemp("banded")
    for c in ("a", "b"):
        (root / "train" / c).mkdir(parents=True)
        for i in range(6):
            im = Image.new("RGB", (64, 48), (20, 40 + i, 200))
            im.paste((220, 30, 30), (0, 0, 8, 48))
            im.paste((220, 30, 30), (56, 0, 64, 48))
            im.save(root / "train" / c / f"{i}.png")
    return root


def eval_preview(root: Path, name: str, model: dict) -> dict:
    spec = root / f"{name}.json"
    spec.write_text(json.dumps({"name": name, "data": {"image_size": 32, "augment": "none"}, "model": model}))
    code, lines, err = cli("preview", str(root / "train"), "--spec", str(spec), "--samples", "1")
    assert code == 0, err[-2000:]
    return lines[-1]["thumbnails"]


def test_the_eval_thumbnails_follow_model_preprocess(banded):
    """The Eval transform is the run's: the weights' resize, crop and mean/std (here set by model.preprocess),
    checked against Pillow's own squash resize; and denormalised with the same mean/std, so colours hold."""
    import numpy as np
    from PIL import Image

    default = eval_preview(banded, "default", {})
    assert default["preprocess"]["name"] == "imagenet" and default["preprocess"]["resize"] == 37
    squash = {"crop_pct": 1.0, "crop_mode": "squash", "mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5]}
    th = eval_preview(banded, "squash", {"preprocess": squash})
    p = th["preprocess"]
    assert (p["crop_mode"], p["crop_pct"], p["resize"], sorted(p["overridden"])) == ("squash", 1.0, 32, sorted(squash))
    assert p["mean"] == [127.5] * 3 and p["warnings"] == []
    for c in th["classes"]:
        s = c["samples"][0]
        with Image.open(s["file"]) as im:
            want = np.asarray(im.convert("RGB").resize((32, 32), Image.BILINEAR), np.float64)
        got = np.asarray(decode(s["eval"]).convert("RGB"), np.float64)
        assert got.shape == want.shape == (32, 32, 3)
        # JPEG at quality 80 blurs the band edges: compare away from them, where the colour is flat
        assert np.abs(got[:, :2] - want[:, :2]).max() < 12, "the squash keeps the red bands"
        assert np.abs(got[:, 10:22] - want[:, 10:22]).max() < 12, "denormalised with model.preprocess's mean/std"
    red = [
        np.asarray(decode(c["samples"][0]["eval"]).convert("RGB"), np.float64)[:, :2, 0].mean()
        for c in default["classes"]
    ]
    assert max(red) < 100, "the default centre crop cuts the bands off"


def test_the_eval_thumbnails_of_hub_weights_do_not_download(banded, monkeypatch, tmp_path):
    """hf-hub: weights with a config not cached yet: the timm preset, a word that the run reads the config,
    and no request (HF_ENDPOINT points at a port that refuses)."""
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("ASCEND_FINETUNE_CACHE", str(tmp_path / "cache"))
    th = eval_preview(banded, "hub", {"backbone": "resnet18", "pretrained": "hf-hub:timm/resnet18.a1_in1k"})
    p = th["preprocess"]
    assert (p["name"], p["interpolation"], p["crop_pct"]) == ("timm", "bicubic", 0.95)
    assert "reads their config.json when it starts" in p["why"] and p["warnings"] == [] and p["pending_config"]
    assert not list((tmp_path / "cache").rglob("config.json")), "nothing fetched"


def test_the_eval_thumbnails_of_a_runners_checkpoint_use_what_it_recorded(banded, run_a, tmp_path):
    """A checkpoint copied out of its run, as "Fine-tune from" a colleague's file: the preprocessing its
    run recorded (the file's run_record), as the run will use it, with no warning."""
    ckpt = run_a / json.loads((run_a / "checkpoints.json").read_text())[-1]["file"]
    loose = tmp_path / ckpt.name
    shutil.copy(ckpt, loose)
    p = eval_preview(banded, "copied", {"pretrained": str(loose)})["preprocess"]
    assert p["why"] == f"recorded with the checkpoint {loose.name}" and p["warnings"] == [] and not p["unresolved"]


def test_a_pretrained_file_the_run_would_refuse_does_not_stop_the_preview(banded, tmp_path):
    """A runner checkpoint of a layout this runner does not know (a newer runner's, or damage): the preview
    still shows the data, with the runner's own preprocessing and why; validate and train report the file."""
    import mindspore as ms
    import numpy as np

    bad = tmp_path / "newer.ckpt"
    one = ms.Tensor(np.ones(2, np.float32))
    entries = [{"name": "backbone.w", "data": one}, {"name": "head.w", "data": one}]
    ms.save_checkpoint(entries + [{"name": "backbone_variant", "data": ms.Tensor(99, ms.int32)}], str(bad))
    th = eval_preview(banded, "bad", {"pretrained": str(bad)})
    assert th["shown"] == 2 and th["preprocess"]["name"] == "imagenet"
    assert "unknown backbone_variant 99" in th["preprocess"]["unresolved"]


def test_the_eval_thumbnails_of_hub_weights_outside_timm_follow_the_cached_files_origin(banded, monkeypatch, tmp_path):
    """An hf-hub: repository outside timm/: the run picks the preprocessing by the downloaded file's origin,
    so the preview reads the cached file's (a PyTorch state dict: torchvision's, with its warning), and says
    when the file is not cached yet, with no request (HF_ENDPOINT points at a port that refuses)."""
    import struct

    from ascend_finetune.models.catalog import parse
    from ascend_finetune.models.download import cache_path

    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("ASCEND_FINETUNE_CACHE", str(tmp_path / "cache"))
    name = "hf-hub:someone/resnet18.my_finetune"
    model = {"backbone": "resnet18", "pretrained": name}
    p = eval_preview(banded, "uncached", model)["preprocess"]
    assert p["pending_weights"] and not p["pending_config"] and p["name"] == "imagenet", p
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").rglob("*.safetensors")), "nothing fetched"

    # A PyTorch state dict in the cache, as a download leaves it (a .safetensors of torchvision's names).
    cached = cache_path(parse(name), {"ASCEND_FINETUNE_CACHE": str(tmp_path / "cache")})
    os.makedirs(os.path.dirname(cached), exist_ok=True)
    tensors = {"conv1.weight": 8, "bn1.running_mean": 8, "fc.weight": 8}
    header, at = {}, 0
    for key, n in tensors.items():
        header[key] = {"dtype": "F32", "shape": [n // 4], "data_offsets": [at, at + n]}
        at += n
    raw = json.dumps(header).encode()
    with open(cached, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + bytes(at))
    p = eval_preview(banded, "cached", model)["preprocess"]
    assert (p["name"], p["pending_weights"]) == ("torchvision", False), p
    assert [w["code"] for w in p["warnings"]] == ["preprocess_assumed"], p


def test_hub_weights_outside_timm_in_the_preview_as_the_run_would_take_them(banded, monkeypatch, tmp_path):
    """No "may change" note where the file's origin picks nothing (model.preprocess names a preset) or the run
    cannot download (HF_HUB_OFFLINE: it fails, and the preview says why); a symlink planted at the cached
    file's name, which the run downloads over, is not read as the weights."""
    from ascend_finetune.models.catalog import parse
    from ascend_finetune.models.download import cache_path

    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("ASCEND_FINETUNE_CACHE", str(tmp_path / "cache"))
    name = "hf-hub:someone/resnet18.my_finetune"
    p = eval_preview(banded, "preset", {"backbone": "resnet18", "pretrained": name, "preprocess": "timm"})["preprocess"]
    assert (p["name"], p["pending_weights"], p["unresolved"]) == ("timm", False, None), p

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    p = eval_preview(banded, "offline", {"backbone": "resnet18", "pretrained": name})["preprocess"]
    assert not p["pending_weights"] and "HF_HUB_OFFLINE is set" in p["unresolved"], p
    monkeypatch.delenv("HF_HUB_OFFLINE")

    cached = cache_path(parse(name), {"ASCEND_FINETUNE_CACHE": str(tmp_path / "cache")})
    os.makedirs(os.path.dirname(cached), exist_ok=True)
    os.symlink(tmp_path / "anything", cached)
    p = eval_preview(banded, "symlink", {"backbone": "resnet18", "pretrained": name})["preprocess"]
    assert p["name"] == "imagenet" and "unsafe" in (p["unresolved"] or ""), p
