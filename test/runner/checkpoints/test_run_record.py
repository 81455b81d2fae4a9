"""A checkpoint carries its run's record (the preprocessing its weights were trained with, where the
pretrained weights came from: run_record.py), so one copied out of its run folder, to another box or a
colleague's folder, keeps both: fine-tuning from it uses its preprocessing without
`preprocess_not_recorded`, and a resume from it keeps the weights' lineage. In both checkpoint formats."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import events, of_type, runner, spec, write_spec

from ascend_finetune.checkpoints.manifest import sha256_file
from ascend_finetune.checkpoints.run_record import RECORD_ENTRY, read_record
from ascend_finetune.checkpoints.tools import compare, kind_of

HALF = {"mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5], "crop_pct": 0.9}


def _train(tmp_path, name: str, s: dict):
    run = tmp_path / name
    code, out = runner("train", str(write_spec(tmp_path / f"{name}.json", s)), "--run-dir", str(run))
    assert code == 0, out
    return run, events(run)


@pytest.mark.parametrize("fmt", ["ckpt", "safetensors"])
def test_a_checkpoint_copied_out_of_its_run_keeps_its_preprocessing_and_lineage(fmt, run_a, data_a, tmp_path):
    from ascend_finetune.train.weights_setup import recorded_weights

    parent = run_a / json.load(open(run_a / "checkpoints.json"))[-1]["file"]
    model = {"pretrained": str(parent), "preprocess": HALF, "freeze": "backbone"}
    run, evs = _train(tmp_path, "r", spec(data_a, model=model, train={"epochs": 1}, checkpoint={"format": fmt}))
    started = of_type(evs, "run_started")[0]
    entry = json.load(open(run / "checkpoints.json"))[-1]
    loose = tmp_path / "elsewhere" / f"r.{fmt}"  # as Copy Weights to Target or a download leaves it
    loose.parent.mkdir()
    shutil.copy(run / entry["file"], loose)

    record = read_record(str(loose))
    assert record is not None and record["preprocess"] == entry["preprocess"] == started["preprocess"]
    assert record["weights"] == entry["weights"] and record["weights"]["sha256"] == sha256_file(parent)
    assert kind_of(RECORD_ENTRY) == "meta", "inspect lists it with the counters, not as a weight"
    # Two runs' records differ in length: compare leaves them out, not as an architecture's shape mismatch.
    c = compare(str(parent), str(loose), None)
    listed = (
        [r["name"] for r in c["tensors"]] + c["only_in_a"] + c["only_in_b"] + [m["name"] for m in c["shape_mismatch"]]
    )
    assert RECORD_ENTRY not in listed and not c["shape_mismatch"], c["shape_mismatch"]
    # A resume from the copy keeps the lineage of the weights the run started from.
    assert recorded_weights(str(loose), None, None) == entry["weights"]

    # Fine-tune from the copy under `auto`: its preprocessing, no warning, every backbone tensor loaded.
    _, evs_f = _train(tmp_path, "f", spec(data_a, model={"pretrained": str(loose)}, train={"epochs": 1}))
    got = of_type(evs_f, "run_started")[0]
    assert (got["preprocess"]["mean"], got["preprocess"]["crop_pct"]) == ([127.5] * 3, 0.9)
    assert got["preprocess"]["why"] == f"recorded with the checkpoint r.{fmt}"
    codes = [w["code"] for w in of_type(evs_f, "warning")]
    assert "preprocess_not_recorded" not in codes and "pretrained_partial" not in codes, codes
    assert got["pretrained"]["loaded"] > 0 and not got["pretrained"]["missing"]
    # Down the chain: F's weights are the copy, which grew from run_a's checkpoint (and that from nothing).
    assert got["pretrained"]["from"] == entry["weights"] and "from" not in entry["weights"]
    assert json.load(open(tmp_path / "f" / "checkpoints.json"))[-1]["weights"]["from"] == entry["weights"]


def test_a_record_that_is_not_a_small_json_object_is_no_record(tmp_path):
    import mindspore as ms
    import numpy as np

    w = ms.Parameter(ms.Tensor(np.ones((2, 2), np.float32)), name="w")
    for name, data in (
        ("list", ms.Tensor(np.frombuffer(b"[1, 2]", np.uint8).copy())),
        ("bad-json", ms.Tensor(np.frombuffer(b"{nope", np.uint8).copy())),
        ("float", ms.Tensor(np.ones(4, np.float32))),
        ("2d", ms.Tensor(np.frombuffer(b'{"a":1}{"a":2}', np.uint8).copy().reshape(2, 7))),
        ("deep", ms.Tensor(np.frombuffer(b"[" * 60000, np.uint8).copy())),
    ):
        path = tmp_path / f"{name}.ckpt"
        ms.save_checkpoint([{"name": "w", "data": w}, {"name": RECORD_ENTRY, "data": data}], str(path))
        assert read_record(str(path)) is None, name
    (tmp_path / "junk.ckpt").write_bytes(b"\x00" * 64)
    assert read_record(str(tmp_path / "junk.ckpt")) is None


def test_a_records_values_are_checked_before_they_are_used(tmp_path):
    """A record in a file someone else wrote: a preprocessing whose name is not a preset's is none, and
    the weights' lineage keeps only values of the right form (they go on into run_started, new manifest
    entries and the next record)."""
    import mindspore as ms
    import numpy as np

    from ascend_finetune.checkpoints.run_record import lineage
    from ascend_finetune.models.preprocess import recorded_for

    w = ms.Parameter(ms.Tensor(np.ones((2, 2), np.float32)), name="w")
    record = {"preprocess": {"name": ["imagenet"]}, "weights": {"source": "x" * 5000, "sha256": "not-a-hash"}}
    raw = json.dumps(record).encode()
    path = tmp_path / "odd.ckpt"
    ms.save_checkpoint(
        [{"name": "w", "data": w}, {"name": RECORD_ENTRY, "data": ms.Tensor(np.frombuffer(raw, np.uint8).copy())}],
        str(path),
    )
    assert read_record(str(path)) == record
    assert recorded_for(str(path)) is None
    assert lineage(record["weights"]) is None, "no source of a usable length"
    sha = "ab" * 32
    good = {"source": "mindcv:resnet18", "file": "/c/r.ckpt", "origin": "mindcv", "sha256": sha}
    assert lineage({**good, "extra": 1}) == good
    # A chain of 21 fine-tunes (gen20 from gen19 ... from gen0): the newest 8 links and the first weights.
    chain: dict = {**good, "source": "gen0"}
    for g in range(1, 21):
        chain = {**good, "source": f"gen{g}", "from": chain}
    kept, names = lineage(chain), []
    while kept:
        names.append((kept["source"], kept.get("skipped")))
        kept = kept.get("from")
    assert names == [(f"gen{g}", None) for g in range(20, 12, -1)] + [("gen0", 12)], names
    # Kept again down the next fine-tune: still the first weights, the count of those left out grows.
    again, names = lineage({**good, "source": "gen21", "from": lineage(chain)}), []
    while again:
        names.append((again["source"], again.get("skipped")))
        again = again.get("from")
    assert names[0] == ("gen21", None) and names[-1] == ("gen0", 13) and len(names) == 9
    assert lineage({**good, "origin": "elsewhere", "sha256": sha.upper(), "file": "a\x1b[2Jb"}) == {
        "source": "mindcv:resnet18"
    }


def test_a_record_too_long_for_a_reader_loses_the_chain_first_never_the_preprocessing(tmp_path):
    """run_record's reader takes at most 64 KiB: a longer record (a chain of long non-ASCII paths) is saved
    without its `from` links, then without the lineage, and the preprocessing always stays."""
    import mindspore as ms
    import numpy as np

    from ascend_finetune.checkpoints.run_record import MAX_RECORD_BYTES, record_tensor

    pre = {"name": "timm", "mean": [127.5] * 3}
    link = {"source": "/数据/" + "权" * 900, "sha256": "ab" * 32}
    chain: dict = dict(link)
    for _ in range(30):
        chain = {**link, "from": chain}
    w = ms.Parameter(ms.Tensor(np.ones(2, np.float32)), name="w")
    for facts, kept in (
        ({"preprocess": pre, "weights": chain}, {"preprocess": pre, "weights": link}),
        ({"preprocess": pre, "weights": {**link, "source": "x" * (MAX_RECORD_BYTES + 1)}}, {"preprocess": pre}),
        (
            {"preprocess": pre, "weights": {**link, "from": link}},
            {"preprocess": pre, "weights": {**link, "from": link}},
        ),
    ):
        path = tmp_path / "r.ckpt"
        ms.save_checkpoint([{"name": "w", "data": w}, {"name": RECORD_ENTRY, "data": record_tensor(facts)}], str(path))
        assert read_record(str(path)) == kept
