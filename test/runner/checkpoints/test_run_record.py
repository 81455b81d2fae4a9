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
from ascend_finetune.checkpoints.tools import kind_of

HALF = {"mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5], "crop_pct": 0.9}


def _train(tmp_path, name: str, s: dict):
    run = tmp_path / name
    code, out = runner("train", str(write_spec(tmp_path / f"{name}.json", s)), "--run-dir", str(run))
    assert code == 0, out
    return run, events(run)


@pytest.mark.parametrize("fmt", ["ckpt", "safetensors"])
def test_a_checkpoint_copied_out_of_its_run_keeps_its_preprocessing_and_lineage(fmt, run_a, data_a, tmp_path):
    from ascend_finetune.train.trainer import _recorded_weights

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
    assert kind_of(RECORD_ENTRY) == "meta", "inspect and compare list it with the counters, not as a weight"
    # A resume from the copy keeps the lineage of the weights the run started from.
    assert _recorded_weights(str(loose), None, None) == entry["weights"]

    # Fine-tune from the copy under `auto`: its preprocessing, no warning, every backbone tensor loaded.
    _, evs_f = _train(tmp_path, "f", spec(data_a, model={"pretrained": str(loose)}, train={"epochs": 1}))
    got = of_type(evs_f, "run_started")[0]
    assert (got["preprocess"]["mean"], got["preprocess"]["crop_pct"]) == ([127.5] * 3, 0.9)
    assert got["preprocess"]["why"] == f"recorded with the checkpoint r.{fmt}"
    codes = [w["code"] for w in of_type(evs_f, "warning")]
    assert "preprocess_not_recorded" not in codes and "pretrained_partial" not in codes, codes
    assert got["pretrained"]["loaded"] > 0 and not got["pretrained"]["missing"]


def test_a_record_that_is_not_a_small_json_object_is_no_record(tmp_path):
    import mindspore as ms
    import numpy as np

    w = ms.Parameter(ms.Tensor(np.ones((2, 2), np.float32)), name="w")
    for name, data in (
        ("list", ms.Tensor(np.frombuffer(b"[1, 2]", np.uint8).copy())),
        ("bad-json", ms.Tensor(np.frombuffer(b"{nope", np.uint8).copy())),
        ("float", ms.Tensor(np.ones(4, np.float32))),
        ("2d", ms.Tensor(np.frombuffer(b'{"a":1}{"a":2}', np.uint8).copy().reshape(2, 7))),
    ):
        path = tmp_path / f"{name}.ckpt"
        ms.save_checkpoint([{"name": "w", "data": w}, {"name": RECORD_ENTRY, "data": data}], str(path))
        assert read_record(str(path)) is None, name
    (tmp_path / "junk.ckpt").write_bytes(b"\x00" * 64)
    assert read_record(str(tmp_path / "junk.ckpt")) is None
