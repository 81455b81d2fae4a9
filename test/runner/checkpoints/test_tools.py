"""The checkpoint explorer's runner commands on checkpoints a real run trained: inspect, eval, export,
compare, verify, delete-checkpoints, and the damaged, foreign and hostile inputs they must refuse."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, events, of_type, spec, write_spec

from ascend_finetune.data.demo import CLASSES, make_shapes

TWO = {k: CLASSES[k] for k in ("red circle", "green square")}


def cli(*args: str, timeout: float = 300) -> tuple[int, dict, str]:
    """(exit code, the one JSON object on stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"))
    r = subprocess.run(
        [sys.executable, "-m", "ascend_finetune", *args], capture_output=True, text=True, timeout=timeout, env=env
    )
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, f"one JSON object expected on stdout, got {r.stdout!r} (stderr {r.stderr[-2000:]!r})"
    return r.returncode, json.loads(lines[0]), r.stderr


@pytest.fixture(scope="module")
def data2(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ckdata") / "two"
    make_shapes(str(out), per_class=24, size=32, seed=3, classes=TWO)
    return out


@pytest.fixture(scope="module")
def frozen_run(tmp_path_factory, data2) -> Path:
    """resnet18 at 32 px, 2 classes, frozen backbone, 2 epochs of 2 steps: two checkpoints."""
    d = tmp_path_factory.mktemp("ckrun")
    s = spec(data2, name="ck", model={"freeze": "backbone"}, data={"val_split": 0.25}, train={"epochs": 2, "lr": 0.001})
    code, out, _ = cli("train", str(write_spec(d / "s.json", s)), "--run-dir", str(d / "run"))
    assert code == 0, out
    return d / "run"


@pytest.fixture(scope="module")
def resnet34_ckpt(tmp_path_factory) -> Path:
    """A checkpoint of another architecture: resnet34 with a 3-class head."""
    import mindspore as ms

    from ascend_finetune.models.net import TransferNet

    path = tmp_path_factory.mktemp("foreign") / "r34.ckpt"
    ms.save_checkpoint(TransferNet("resnet34", 3), str(path))
    return path


def manifest(run: Path) -> list[dict]:
    return json.loads((run / "checkpoints.json").read_text())


def copy_run(run: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "run"
    shutil.copytree(run, dst)
    for p in (dst / "checkpoints").iterdir():
        p.chmod(0o644)  # MindSpore saves read-only; the tests damage copies on purpose
    return dst


# -- inspect --------------------------------------------------------------------------------------


def test_inspect_marks_frozen_and_trained_tensors_and_checks_the_head(frozen_run):
    entry = manifest(frozen_run)[-1]
    code, out, _ = cli("inspect", str(frozen_run / entry["file"]), "--run", str(frozen_run))
    assert code == 0, out
    assert out["bytes"] == entry["bytes"] and out["sha256"] == entry["sha256"]
    assert out["manifest"]["sha256_ok"] is True and out["manifest"]["bytes_ok"] is True
    t = {x["name"]: x for x in out["tensors"]}
    assert t["backbone.layer1.0.conv1.weight"] == {
        "name": "backbone.layer1.0.conv1.weight",
        "shape": [64, 64, 3, 3],
        "dtype": "Float32",
        "elements": 64 * 64 * 9,
        "module": "backbone.layer1.0.conv1",
        "trainable": False,
        "kind": "param",
    }
    assert t["head.weight"]["shape"] == [2, 512] and t["head.weight"]["trainable"] is True
    assert t["backbone.bn1.moving_mean"]["trainable"] is False
    assert t["moments.head.weight"]["trainable"] is None and t["step_num"]["trainable"] is None
    assert all(x["trainable"] is False for x in out["tensors"] if x["name"].startswith("backbone."))
    assert out["total_elements"] == sum(x["elements"] for x in out["tensors"])
    assert out["trainable_elements"] == 512 * 2 + 2
    assert out["head_out"] == 2 and out["num_classes"] == 2 and out["head_matches_classes"] is True
    # without the run there is nothing to say about freezing or the classes
    code, bare, _ = cli("inspect", str(frozen_run / entry["file"]))
    assert code == 0 and bare["head_matches_classes"] is None
    assert {x["trainable"] for x in bare["tensors"]} == {None}


@pytest.mark.parametrize(
    ("backbone", "freeze", "head_norm"), [("resnet18", "up_to:layer3", "batchnorm"), ("swin_tiny", "none", "none")]
)
def test_inspect_counts_what_mindspore_trains(backbone, freeze, head_norm, tmp_path):
    """trainable_elements is MindSpore's own count (trainable_params() after the freeze): not layer4's
    BatchNorm statistics, the affine-free head norm's stored scale and shift, or the constants a model
    builds (Swin's attention masks and position indices, backbones.json `constants`)."""
    import mindspore as ms

    from ascend_finetune.models.net import TransferNet, apply_freeze, frozen_parts

    net = TransferNet(backbone, 3, frozen_upto=frozen_parts(freeze, backbone), head_norm=head_norm)
    apply_freeze(net)
    want = sum(int(p.size) for p in net.trainable_params())
    model = {"backbone": backbone, "freeze": freeze, "head_norm": head_norm}
    (tmp_path / "spec.json").write_text(json.dumps({"model": model}))
    ms.save_checkpoint(net, str(tmp_path / "w.ckpt"))
    code, out, _ = cli("inspect", str(tmp_path / "w.ckpt"), "--run", str(tmp_path))
    assert code == 0, out
    assert out["trainable_elements"] == want
    t = {x["name"]: x["trainable"] for x in out["tensors"]}
    if backbone == "resnet18":
        assert t["head.norm.gamma"] is False and t["head.norm.beta"] is False and t["head.weight"] is True
        assert t["backbone.layer4.0.bn1.gamma"] is True and t["backbone.layer3.0.bn1.gamma"] is False
    else:
        assert t["backbone.model.layers.0.blocks.1.attn_mask"] is False
        assert t["backbone.model.layers.0.blocks.1.attn.relative_bias.index"] is False
        assert t["backbone.model.layers.0.blocks.1.attn.q.weight"] is True


def test_inspect_another_architecture_shows_a_head_that_does_not_fit(frozen_run, resnet34_ckpt):
    code, out, _ = cli("inspect", str(resnet34_ckpt), "--run", str(frozen_run))
    assert code == 0, out
    assert out["head_out"] == 3 and out["head_matches_classes"] is False and out["manifest"] is None


def _entry_bytes(name: bytes, dims: list[int], dtype: bytes, content: bytes) -> bytes:
    """One protobuf Checkpoint.value, written by hand (a file that lies about its tensor's size)."""

    def varint(n):
        out = b""
        while True:
            b, n = n & 0x7F, n >> 7
            if not n:
                return out + bytes([b])
            out += bytes([b | 0x80])

    def field(num, payload):
        return varint((num << 3) | 2) + varint(len(payload)) + payload

    tensor = b"".join(varint(1 << 3) + varint(d) for d in dims) + field(2, dtype) + field(3, content)
    return field(1, field(1, name) + field(2, tensor))


@pytest.mark.parametrize(
    "damage, reason",
    [
        ("truncated", "truncated"),
        ("random", "not a MindSpore ckpt file"),
        ("empty", "empty"),
        ("json", "not a MindSpore ckpt file"),
        ("lies", "400000 expected"),
        ("missing", "file not found"),
    ],
)
def test_damaged_checkpoints_are_bad_checkpoint_errors_not_crashes(frozen_run, tmp_path, damage, reason):
    src = (frozen_run / manifest(frozen_run)[0]["file"]).read_bytes()
    f = tmp_path / "x.ckpt"
    if damage == "truncated":
        f.write_bytes(src[: len(src) // 2])
    elif damage == "random":
        f.write_bytes(np.random.default_rng(0).bytes(5000))
    elif damage == "empty":
        f.write_bytes(b"")
    elif damage == "json":
        f.write_text('{"not": "a checkpoint"}')
    elif damage == "lies":  # 4 bytes for a 100000-element tensor: MindSpore's loader accepts this
        f.write_bytes(_entry_bytes(b"w", [100000], b"Float32", b"\0\0\0\0"))
    for args in (
        ["inspect", str(f)],
        ["eval", "--run", str(frozen_run), "--ckpt", str(f)],
        ["export", "--run", str(frozen_run), "--ckpt", str(f), "--format", "mindir"],
        ["compare", str(f), str(frozen_run / manifest(frozen_run)[0]["file"])],
    ):
        if damage != "truncated" and args[0] in ("eval", "export"):
            continue  # the file check is shared; one damage is enough to prove eval and export use it
        code, out, err = cli(*args)
        assert code == 2, (args, out)
        assert out["error"]["kind"] == "bad_checkpoint", out
        assert reason in out["error"]["message"], out
        assert "Traceback" not in err
    assert not list(tmp_path.glob("*.mindir")), "nothing exported from a damaged file"


def _varint(n: int) -> bytes:
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])


def _entry_head(name: bytes, dims: list[int], dtype: bytes, content_len: int) -> bytes:
    """A protobuf Checkpoint.value whose tensor_content declares content_len bytes, up to where those
    bytes would start (they are left to the caller: written, missing, or a sparse hole)."""

    def field(num, payload, extra=0):
        return _varint((num << 3) | 2) + _varint(len(payload) + extra) + payload

    tensor = b"".join(_varint(1 << 3) + _varint(d) for d in dims) + field(2, dtype)
    tensor += _varint((3 << 3) | 2) + _varint(content_len)
    value = field(1, name) + field(2, tensor, content_len)
    return field(1, value, content_len)


def _safetensors(path: Path, header: dict | str, data: bytes = b"") -> Path:
    raw = (header if isinstance(header, str) else json.dumps(header)).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)
    return path


def _refused(path: Path, reason: str, max_s: float = 30) -> None:
    for args in (["inspect", str(path)], ["compare", str(path), str(path)]):
        t0 = time.monotonic()
        code, out, err = cli(*args)
        assert code == 2 and out["error"]["kind"] == "bad_checkpoint", (args, out, err[-2000:])
        assert reason in out["error"]["message"], out
        assert "Traceback" not in err
        assert time.monotonic() - t0 < max_s, f"{args[0]} took {time.monotonic() - t0:.1f}s"


@pytest.mark.parametrize(
    "kind, reason",
    [
        ("st-negative", "impossible shape [-1, -4] (a negative dimension)"),
        ("st-huge-zero", "impossible shape [0, 100000000000000000000] Float32"),
        ("st-float-dim", "bad header entry"),
        ("st-too-many-dims", "40 dimensions (at most 32)"),
        ("ckpt-huge-zero", "impossible shape [0, 1099511627776] Float32"),
        ("ckpt-negative-packed", "(a negative dimension)"),
    ],
)
def test_checkpoints_with_impossible_shapes_are_bad_checkpoint(tmp_path, kind, reason):
    """Shapes that pass the byte count (negative dims whose product is positive, a zero next to 1e20)
    made compare raise from numpy: they are refused as bad_checkpoint by every tool."""
    if kind == "st-negative":  # (-1) x (-4) = 4 elements, 16 bytes: the byte count agrees
        f = _safetensors(
            tmp_path / "x.safetensors", {"w": {"dtype": "F32", "shape": [-1, -4], "data_offsets": [0, 16]}}, b"\0" * 16
        )
    elif kind == "st-huge-zero":
        f = _safetensors(
            tmp_path / "x.safetensors", {"w": {"dtype": "F32", "shape": [0, 10**20], "data_offsets": [0, 0]}}
        )
    elif kind == "st-float-dim":
        f = _safetensors(
            tmp_path / "x.safetensors", '{"w": {"dtype": "F32", "shape": [0, 1e20], "data_offsets": [0, 0]}}'
        )
    elif kind == "st-too-many-dims":
        f = _safetensors(
            tmp_path / "x.safetensors", {"w": {"dtype": "F32", "shape": [1] * 40, "data_offsets": [0, 4]}}, b"\0" * 4
        )
    elif kind == "ckpt-huge-zero":
        f = tmp_path / "x.ckpt"
        f.write_bytes(_entry_head(b"w", [0, 1 << 40], b"Float32", 0))
    else:  # packed dims (how protobuf writes repeated int64): -1 and -4 as 10-byte varints, 16 bytes of data
        dims = _varint(2**64 - 1) + _varint(2**64 - 4)
        tensor = _varint(10) + _varint(len(dims)) + dims + _varint(18) + _varint(7) + b"Float32"
        tensor += _varint(26) + _varint(16) + b"\0" * 16
        value = _varint(10) + _varint(1) + b"w" + _varint(18) + _varint(len(tensor)) + tensor
        f = tmp_path / "x.ckpt"
        f.write_bytes(_varint(10) + _varint(len(value)) + value)
    _refused(f, reason)


@pytest.mark.parametrize("fmt", ["ckpt", "safetensors"])
def test_a_sparse_checkpoint_is_refused_without_reading_its_holes(tmp_path, fmt):
    """A 2 GiB tensor whose bytes are a hole (`truncate`): the index checks pass on the file's size,
    but the file stores a few bytes. Refused at once, before inspect hashes or compare reads it."""
    n = 2 << 30
    f = tmp_path / f"sparse.{fmt}"
    if fmt == "ckpt":
        head = _entry_head(b"backbone.w", [n // 4], b"Float32", n)
        f.write_bytes(head)
        os.truncate(f, len(head) + n)
    else:
        _safetensors(f, {"w": {"dtype": "F32", "shape": [n // 4], "data_offsets": [0, n]}})
        os.truncate(f, f.stat().st_size + n)
    assert f.stat().st_blocks * 512 < 1 << 20, "the test needs a file system with sparse files"
    _refused(f, "are stored on disk (a sparse file: its size is not its data)", max_s=15)


def test_a_ckpt_that_declares_more_bytes_than_it_has_is_truncated(tmp_path):
    f = tmp_path / "short.ckpt"
    f.write_bytes(_entry_head(b"w", [1 << 20], b"Float32", 4 << 20) + b"\0" * 1000)
    _refused(f, "runs past the end (truncated?)")


def test_inspect_skips_the_hash_above_its_limit_and_says_so(frozen_run, monkeypatch):
    from ascend_finetune.checkpoints import tools

    ckpt = frozen_run / manifest(frozen_run)[-1]["file"]
    out = tools.inspect(str(ckpt), str(frozen_run))
    assert out["sha256"] == manifest(frozen_run)[-1]["sha256"] and out["sha256_skipped"] is None
    monkeypatch.setattr(tools, "INSPECT_HASH_MAX_BYTES", 1000)
    out = tools.inspect(str(ckpt), str(frozen_run))
    assert out["sha256"] is None and "verify --run" in out["sha256_skipped"]
    assert f"the file is {ckpt.stat().st_size} bytes" in out["sha256_skipped"]
    assert out["manifest"]["bytes_ok"] is True and out["manifest"]["sha256_ok"] is None


def test_compare_in_small_blocks_gives_the_same_distances(frozen_run, monkeypatch):
    from ascend_finetune.checkpoints import tools

    first, last = (str(frozen_run / e["file"]) for e in manifest(frozen_run))
    whole = {r["name"]: r for r in tools.compare(first, last, None)["tensors"]}
    monkeypatch.setattr(tools, "COMPARE_BLOCK", 1000)  # head.weight (2 x 512) spans two blocks
    blocked = {r["name"]: r for r in tools.compare(first, last, None)["tensors"]}
    assert whole.keys() == blocked.keys()
    for k, r in whole.items():
        assert blocked[k]["l2_diff"] == pytest.approx(r["l2_diff"], rel=1e-12, abs=1e-300), k
    assert whole["head.weight"]["l2_diff"] > 0


def test_resume_from_a_damaged_checkpoint_is_bad_input_with_the_reason(frozen_run, tmp_path):
    cut = tmp_path / "cut.ckpt"
    cut.write_bytes((frozen_run / manifest(frozen_run)[-1]["file"]).read_bytes()[:300_000])
    code, out, err = cli("train", str(frozen_run / "spec.json"), "--run-dir", str(tmp_path / "r"), "--resume", str(cut))
    assert code == 2 and "Traceback" not in err, out
    assert out["error"]["kind"] == "bad_input" and "--resume" in out["error"]["message"]
    assert "truncated" in out["error"]["message"]


def test_safetensors_and_crc_checkpoints_read_the_same_tensors(frozen_run, tmp_path):
    """checkpoint.format safetensors, and .ckpt files saved with MindSpore's crc_check trailer."""
    import mindspore as ms

    ckpt = frozen_run / manifest(frozen_run)[-1]["file"]
    params = ms.load_checkpoint(str(ckpt))
    st, crc = tmp_path / "x.safetensors", tmp_path / "crc.ckpt"
    ms.save_checkpoint(params, str(st), format="safetensors")
    ms.save_checkpoint(params, str(crc), crc_check=True)
    n = len([k for k in params if k != "run_record"])  # the run's record is facts, which compare leaves out
    for other in (st, crc):
        code, out, _ = cli("compare", str(ckpt), str(other))
        assert code == 0, out
        assert out["summary"] == {"tensors": n, "changed": 0, "unchanged": n, "frozen_max_l2": None}
    code, out, _ = cli("inspect", str(st), "--run", str(frozen_run))
    assert code == 0 and out["format"] == "safetensors" and out["head_matches_classes"] is True
    code, out, _ = cli("eval", "--run", str(frozen_run), "--ckpt", str(st))
    assert code == 0 and out["accuracy"] == pytest.approx(manifest(frozen_run)[-1]["metrics"]["val_acc"])


# -- eval -----------------------------------------------------------------------------------------


def test_eval_on_the_runs_val_set_matches_the_runs_own_evaluation(frozen_run):
    entry = manifest(frozen_run)[-1]
    ckpt = frozen_run / entry["file"]
    code, out, _ = cli("eval", "--run", str(frozen_run), "--ckpt", str(ckpt))
    assert code == 0, out
    started = of_type(events(frozen_run), "run_started")[0]
    assert out["classes"] == started["classes"] == ["green square", "red circle"]
    assert out["num_images"] == started["num_val"] == sum(map(sum, out["confusion"]))
    # the same checkpoint, data split, preprocessing and AMP level as the run's epoch-end eval
    assert out["accuracy"] == pytest.approx(entry["metrics"]["val_acc"])
    assert out["loss"] == pytest.approx(entry["metrics"]["val_loss"], rel=1e-4)
    assert [p["support"] for p in out["per_class"]] == [sum(r) for r in out["confusion"]]
    # two classes: top-5 is 1.0 by definition, in the run's eval and here
    assert out["top5"] == entry["metrics"]["val_top5"] == 1.0
    for i, p in enumerate(out["per_class"]):
        col = sum(r[i] for r in out["confusion"])
        assert p["recall"] == pytest.approx(out["confusion"][i][i] / p["support"])
        assert p["precision"] == (pytest.approx(out["confusion"][i][i] / col) if col else None)
    saved = json.loads((Path(str(ckpt) + ".eval.json")).read_text())
    assert (
        saved["accuracy"] == out["accuracy"] and saved["evaluated_at"] > 0 and saved["ckpt_sha256"] == entry["sha256"]
    )


def test_eval_on_a_folder_skips_and_lists_broken_images(frozen_run, data2, tmp_path):
    folder = tmp_path / "eval"
    shutil.copytree(data2, folder)
    good = sorted((folder / "red circle").iterdir())[0]
    (folder / "red circle" / "cut.png").write_bytes(good.read_bytes()[:40])
    (folder / "green square" / "notes.txt").write_text("not an image")
    code, out, _ = cli(
        "eval",
        "--run",
        str(frozen_run),
        "--ckpt",
        str(frozen_run / manifest(frozen_run)[0]["file"]),
        "--data",
        str(folder),
        "--batch-size",
        "8",
    )
    assert code == 0, out
    assert out["data"] == str(folder) and out["num_images"] == 48
    skipped = {os.path.basename(s["file"]): s["reason"] for s in out["skipped"]}
    assert set(skipped) == {"cut.png", "notes.txt"} and all(skipped.values())


def test_eval_counts_every_image_once_when_the_batch_does_not_divide_the_set(frozen_run, tmp_path):
    """12 validation images in batches of 5 (5 + 5 + 2, the last padded to 5): accuracy is the
    per-image one that `predict` gives image by image, and the records name each image once."""
    run = tmp_path / "run"
    shutil.copytree(frozen_run, run)
    s = json.loads((run / "spec.json").read_text())
    s["data"]["workers"] = 0  # the spec's default ("the cores"): eval takes it as one thread
    (run / "spec.json").write_text(json.dumps(s))
    ckpt = run / manifest(run)[-1]["file"]
    code, out, err = cli("eval", "--run", str(run), "--ckpt", str(ckpt), "--batch-size", "5")
    assert code == 0 and "Traceback" not in err, out
    assert out["num_images"] == 12 == sum(map(sum, out["confusion"]))
    recs = out["predictions"]
    assert out["predictions_kept"] == {"total": 12, "kept": 12, "limit": 2000, "all": True}
    files = [r["file"] for r in recs]
    assert len(set(files)) == 12 and all(f.split("/")[0] in out["classes"] for f in files)
    assert all(out["classes"][r["label"]] == r["file"].split("/")[0] for r in recs)
    code, pred, _ = cli(
        "predict", "--ckpt", str(ckpt), "--batch-size", "1", *[os.path.join(out["data"], f) for f in files]
    )
    assert code == 0 and pred["ok"] == 12, pred
    by_image = [p["top"][0]["class"] == out["classes"][r["label"]] for p, r in zip(pred["predictions"], recs)]
    assert out["accuracy"] == pytest.approx(sum(by_image) / 12)
    for p, r in zip(pred["predictions"], recs):  # the same top classes and probabilities, image by image
        assert [out["classes"][c] for c, _ in r["top"]] == [t["class"] for t in p["top"]]
        assert [pr for _, pr in r["top"]] == pytest.approx([t["prob"] for t in p["top"]], abs=1e-4)
    saved = json.loads(Path(str(ckpt) + ".eval.json").read_text())
    assert saved["predictions"] == recs


def test_eval_on_a_folder_with_other_classes_names_missing_and_extra(frozen_run, tmp_path):
    make_shapes(
        str(tmp_path / "other"),
        per_class=2,
        size=32,
        seed=4,
        classes={k: CLASSES[k] for k in ("green square", "blue triangle")},
    )
    code, out, err = cli(
        "eval",
        "--run",
        str(frozen_run),
        "--ckpt",
        str(frozen_run / manifest(frozen_run)[0]["file"]),
        "--data",
        str(tmp_path / "other"),
    )
    assert code == 2 and "Traceback" not in err
    e = out["error"]
    assert e["kind"] == "bad_input" and e["missing"] == ["red circle"] and e["extra"] == ["blue triangle"]
    assert "red circle" in e["message"] and "blue triangle" in e["message"]


def test_eval_and_export_refuse_a_checkpoint_of_another_architecture(frozen_run, resnet34_ckpt):
    for args in (["eval"], ["export", "--format", "onnx"]):
        code, out, err = cli(*args, "--run", str(frozen_run), "--ckpt", str(resnet34_ckpt))
        assert code == 2 and "Traceback" not in err, out
        e = out["error"]
        assert e["kind"] == "bad_checkpoint" and "does not fit this run's model (resnet18, 2 classes)" in e["message"]
        assert "head.weight: [3, 512] in the file, [2, 512] in the model" in e["mismatched"]
    assert not resnet34_ckpt.with_suffix(".onnx").exists()


# -- export ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def graph_mode():
    """GRAPH_MODE as the runner uses it, then back to what other test modules in this process had
    (the device stays MindSpore's default here, CPU: it can be set only once per process)."""
    import mindspore as ms

    before = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        yield
    finally:
        ms.set_context(mode=before)


def _checkpoint_logits(run: Path, ckpt: Path, x: np.ndarray) -> np.ndarray:
    import mindspore as ms

    from ascend_finetune.checkpoints.loading import load_net
    from ascend_finetune.checkpoints.tools import load_run

    with graph_mode():
        return load_net(load_run(str(run)), str(ckpt))(ms.Tensor(x)).asnumpy()


def test_export_mindir_loads_back_with_the_checkpoints_logits(frozen_run, tmp_path):
    import mindspore as ms

    ckpt = copy_run(frozen_run, tmp_path) / manifest(frozen_run)[-1]["file"]
    code, out, _ = cli("export", "--run", str(frozen_run), "--ckpt", str(ckpt), "--format", "mindir")
    assert code == 0, out
    assert out["file"] == str(ckpt.with_suffix(".mindir")) and out["input_shape"] == [1, 3, 32, 32]
    assert out["bytes"] == os.path.getsize(out["file"]) > 1_000_000
    # The exported network takes normalised input: the result says how (this copy sits outside its run,
    # so the runner's own, which is also what the run recorded).
    recorded = manifest(frozen_run)[-1]["preprocess"]
    keys = ("name", "interpolation", "crop_pct", "rounding", "mean", "std", "crop_mode")
    assert [out["preprocess"][k] for k in keys] == [recorded[k] for k in keys] and recorded["name"] == "imagenet"
    # ...and the same goes beside the model, with the class names its outputs stand for.
    beside = json.loads(ckpt.with_suffix(".preprocess.json").read_text())
    assert out["preprocess_file"] == str(ckpt.with_suffix(".preprocess.json"))
    assert beside["model"] == ckpt.with_suffix(".mindir").name and beside["input_shape"] == [1, 3, 32, 32]
    assert beside["preprocess"] == out["preprocess"]
    assert beside["classes"] == json.loads((frozen_run / "classes.json").read_text()) == out["classes"]
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    with graph_mode():
        loaded = ms.nn.GraphCell(ms.load(out["file"]))(ms.Tensor(x)).asnumpy()
    np.testing.assert_allclose(loaded, _checkpoint_logits(frozen_run, ckpt, x), rtol=1e-5, atol=1e-5)
    assert not [p for p in ckpt.parent.iterdir() if p.name.startswith(".export-")], "no temporary folder left"


def test_export_into_a_folder_whose_name_mindspore_refuses(frozen_run, tmp_path):
    # MindSpore's exporter refuses file names with spaces or quotes; users' folders have them.
    ckpt = copy_run(frozen_run, tmp_path) / manifest(frozen_run)[-1]["file"]
    target = tmp_path / "it's my run" / "model.onnx"
    code, out, _ = cli(
        "export", "--run", str(frozen_run), "--ckpt", str(ckpt), "--format", "onnx", "--out", str(target)
    )
    assert code == 0, out
    assert out["file"] == str(target) and target.stat().st_size == out["bytes"] > 1_000_000
    assert sorted(p.name for p in target.parent.iterdir()) == ["model.onnx", "model.preprocess.json"], (
        "the model and its preprocessing, no temporary folder"
    )


def test_export_onnx_passes_the_checker_and_runs_with_the_same_logits(frozen_run, tmp_path):
    import onnx
    import onnxruntime

    ckpt = frozen_run / manifest(frozen_run)[0]["file"]
    target = tmp_path / "out" / "model.onnx"
    code, out, _ = cli(
        "export", "--run", str(frozen_run), "--ckpt", str(ckpt), "--format", "onnx", "--out", str(target)
    )
    assert code == 0, out
    assert out["file"] == str(target) and out["format"] == "onnx"
    model = onnx.load(str(target))
    onnx.checker.check_model(model)
    assert [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim] == [1, 3, 32, 32]
    x = np.random.default_rng(2).standard_normal((1, 3, 32, 32)).astype(np.float32)
    sess = onnxruntime.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    got = sess.run(None, {sess.get_inputs()[0].name: x})[0]
    want = _checkpoint_logits(frozen_run, ckpt, x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    code, out, _ = cli(
        "export",
        "--run",
        str(frozen_run),
        "--ckpt",
        str(ckpt),
        "--format",
        "onnx",
        "--out",
        str(tmp_path / "model.mindir"),
    )
    assert code == 2 and out["error"]["kind"] == "bad_input" and ".onnx" in out["error"]["message"]


# -- compare --------------------------------------------------------------------------------------


def test_compare_on_a_frozen_backbone_run_shows_the_backbone_unchanged(frozen_run, resnet34_ckpt):
    import mindspore as ms

    first, last = (frozen_run / e["file"] for e in manifest(frozen_run))
    code, out, _ = cli("compare", str(first), str(last), "--run", str(frozen_run))
    assert code == 0, out
    rows = {r["name"]: r for r in out["tensors"]}
    a, b = ms.load_checkpoint(str(first)), ms.load_checkpoint(str(last))
    backbone = [r for n, r in rows.items() if n.startswith("backbone.")]
    assert len(backbone) == sum(n.startswith("backbone.") for n in a) > 60
    assert all(r["frozen"] is True and r["l2_diff"] == 0.0 for r in backbone)
    assert rows["head.weight"]["frozen"] is False and rows["head.weight"]["l2_diff"] > 0
    assert out["summary"]["frozen_max_l2"] == 0.0
    assert out["summary"]["tensors"] == len(rows) == out["summary"]["changed"] + out["summary"]["unchanged"]
    assert out["only_in_a"] == out["only_in_b"] == out["shape_mismatch"] == []
    rel = [r["rel_change"] for r in out["tensors"] if r["rel_change"] is not None]
    assert rel == sorted(rel, reverse=True), "largest relative change first"
    want = np.linalg.norm(a["head.weight"].asnumpy().astype(np.float64) - b["head.weight"].asnumpy())
    assert rows["head.weight"]["l2_diff"] == pytest.approx(want)
    assert rows["head.weight"]["rel_change"] == pytest.approx(want / np.linalg.norm(a["head.weight"].asnumpy()))
    # another architecture: what exists in one only, and what changed shape
    code, out, _ = cli("compare", str(last), str(resnet34_ckpt))
    assert code == 0
    assert {"name": "head.weight", "shape_a": [2, 512], "shape_b": [3, 512]} in out["shape_mismatch"]
    assert "backbone.layer3.5.conv1.weight" in out["only_in_b"] and "moments.head.weight" in out["only_in_a"]
    assert {r["frozen"] for r in out["tensors"]} == {None}


# -- verify ---------------------------------------------------------------------------------------


def test_verify_reports_changed_truncated_and_missing_files(frozen_run, tmp_path):
    run = copy_run(frozen_run, tmp_path)
    code, out, _ = cli("verify", "--run", str(run))
    assert code == 0 and out["ok"] is True
    assert [(r["exists"], r["bytes_ok"], r["sha256_ok"]) for r in out["checkpoints"]] == [(True, True, True)] * 2
    first, second = (run / e["file"] for e in manifest(run))
    data = bytearray(first.read_bytes())
    data[len(data) // 2] ^= 0xFF
    first.write_bytes(bytes(data))  # same size, other content
    second.write_bytes(second.read_bytes()[:1000])
    out = cli("verify", "--run", str(run))[1]
    assert out["ok"] is False
    a, b = out["checkpoints"]
    assert (a["exists"], a["bytes_ok"], a["sha256_ok"]) == (True, True, False) and "sha256" in a["problem"]
    assert (b["exists"], b["bytes_ok"], b["sha256_ok"]) == (True, False, False) and "truncated" in b["problem"]
    second.unlink()
    b = cli("verify", "--run", str(run))[1]["checkpoints"][1]
    assert (b["exists"], b["bytes_ok"], b["sha256_ok"]) == (False, False, False) and "missing" in b["problem"]
    # a manifest edited by hand to point elsewhere is reported, and nothing outside is read
    entries = manifest(run)
    entries[0]["file"] = "../../etc/hostname"
    (run / "checkpoints.json").write_text(json.dumps(entries))
    a = cli("verify", "--run", str(run))[1]["checkpoints"][0]
    assert a["exists"] is False and "outside the run directory" in a["problem"]
    code, out, _ = cli("verify", "--run", str(tmp_path))
    assert code == 2 and out["error"]["kind"] == "not_a_run"


# -- delete-checkpoints ---------------------------------------------------------------------------


def test_delete_refuses_paths_outside_the_run_unlisted_files_and_the_best(frozen_run, tmp_path):
    run = copy_run(frozen_run, tmp_path)
    outside = tmp_path / "precious.ckpt"
    outside.write_bytes(b"keep me")
    (run / "checkpoints" / "link.ckpt").symlink_to(outside)
    (run / "checkpoints" / "stray.ckpt").write_bytes(b"x")
    before = (run / "checkpoints.json").read_bytes()
    best = next(e["file"] for e in manifest(run) if e["best"])
    cases = [
        ("../precious.ckpt", "outside_run"),
        (str(outside), "outside_run"),
        ("/etc/hostname", "outside_run"),
        ("checkpoints/../../precious.ckpt", "outside_run"),
        ("checkpoints/link.ckpt", "outside_run"),
        ("checkpoints/stray.ckpt", "not_in_manifest"),
        ("spec.json", "not_in_manifest"),
        (best, "best_protected"),
    ]
    for f, kind in cases:
        code, out, err = cli("delete-checkpoints", "--run", str(run), f)
        assert code == 2 and out["error"]["kind"] == kind, (f, out)
        assert "Traceback" not in err
    # a refusal in the list refuses the whole call
    other = next(e["file"] for e in manifest(run) if not e["best"])
    code, out, _ = cli("delete-checkpoints", "--run", str(run), other, "../precious.ckpt")
    assert code == 2
    assert (run / "checkpoints.json").read_bytes() == before and outside.read_bytes() == b"keep me"
    assert all((run / e["file"]).exists() for e in manifest(run))


def test_delete_removes_files_and_rewrites_the_manifest(frozen_run, tmp_path):
    run = copy_run(frozen_run, tmp_path)
    entries = manifest(run)
    best = next(e["file"] for e in entries if e["best"])
    other = next(e["file"] for e in entries if not e["best"])
    Path(str(run / other) + ".eval.json").write_text("{}")
    code, out, _ = cli("delete-checkpoints", "--run", str(run), str(run / other))  # an absolute path inside works
    assert code == 0, out
    assert out["deleted"] == [other] and out["kept"] == [best]
    assert not (run / other).exists() and not Path(str(run / other) + ".eval.json").exists()
    assert [e["file"] for e in manifest(run)] == [best] and manifest(run)[0]["best"] is True
    assert not [p for p in run.iterdir() if ".tmp-" in p.name], "the manifest was replaced atomically"
    code, out, _ = cli("delete-checkpoints", "--run", str(run), "--allow-best", "--", best)  # the extension's argv
    assert code == 0 and out == {"run_dir": str(run), "deleted": [best], "kept": []}
    assert manifest(run) == [] and not (run / best).exists()


def test_delete_while_the_run_trains_spares_only_the_newest(frozen_run, tmp_path):
    run = copy_run(frozen_run, tmp_path)
    first, newest = (e["file"] for e in manifest(run))
    with open(run / ".lock", "w") as lock:  # what a live train process holds for its lifetime
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        code, out, _ = cli("delete-checkpoints", "--run", str(run), newest, "--allow-best")
        assert code == 2 and out["error"]["kind"] == "run_live"
        code, out, _ = cli("delete-checkpoints", "--run", str(run), first, "--allow-best")
        assert code == 0 and out["deleted"] == [first]
    assert [e["file"] for e in manifest(run)] == [newest]


def test_a_training_save_keeps_what_delete_removed(tmp_path):
    """The train process re-reads checkpoints.json under the manifest lock before it adds a checkpoint."""
    import mindspore as ms

    from ascend_finetune.checkpoints.store import CheckpointStore

    net = ms.nn.Dense(4, 2)
    entries = [{"name": p.name, "data": p} for p in net.get_parameters()]
    store = CheckpointStore(str(tmp_path), "live", "ckpt", keep_max=5, keep_best=True)
    for i in (1, 2):
        store.save(entries, epoch=i, step=i, metrics={"val_acc": 0.1 * i})
    code, out, _ = cli("delete-checkpoints", "--run", str(tmp_path), "checkpoints/live-e1-s1.ckpt")
    assert code == 0, out
    store.save(entries, epoch=3, step=3, metrics={"val_acc": 0.05})
    assert [e["file"] for e in manifest(tmp_path)] == ["checkpoints/live-e2-s2.ckpt", "checkpoints/live-e3-s3.ckpt"]
