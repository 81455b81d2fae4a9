"""Loss scaling: a huge initial scale overflows, the scale halves per overflow, weights stay put."""

from __future__ import annotations

import json

import mindspore as ms
import numpy as np
from conftest import events, of_type, runner, spec, write_spec


def test_forced_overflow_halves_scale_and_skips_updates(data_a, tmp_path):
    s = spec(
        data_a,
        name="overflow",
        amp={"level": "O2", "loss_scale": "dynamic", "init_scale": 2.0**28},
        train={"epochs": 2, "lr": 0.01},
        checkpoint={"every_steps": 1, "keep_max": 100, "keep_best": False},
    )
    run = tmp_path / "run"
    code, out = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(run))
    assert code == 0, out
    steps = of_type(events(run), "step")
    flags = [st["overflow"] for st in steps]
    assert flags[0] and flags[1], "2^28 times an fp16 loss gradient overflows"
    assert not all(flags), "the scale comes down until steps go through"
    prev = 2.0**28
    for st in steps:
        # dynamic scaling: halve on every overflow, keep otherwise (scale_window 2000 is never reached)
        assert st["loss_scale"] == (prev / 2 if st["overflow"] else prev), st
        assert st["skipped"] == st["overflow"]
        prev = st["loss_scale"]
    assert sum(e["overflow_count"] for e in of_type(events(run), "epoch_end")) == sum(flags)
    # a checkpoint after every step: an overflowed step leaves every weight as it was
    manifest = {e["step"]: run / e["file"] for e in json.load(open(run / "checkpoints.json"))}

    def weights(step):
        return {
            k: v.asnumpy()
            for k, v in ms.load_checkpoint(str(manifest[step])).items()
            if k.startswith(("backbone.", "head.")) and "moving_" not in k
        }

    checked = 0
    for st in steps[1:]:
        before, after = weights(st["step"] - 1), weights(st["step"])
        same = all(np.array_equal(before[k], after[k]) for k in before)
        assert same == st["overflow"], f"step {st['step']}: overflow={st['overflow']} but weights same={same}"
        checked += 1
    assert checked == len(steps) - 1


def test_amp_auto_trains_on_cpu_as_mindspores_own_auto(tmp_path):
    """`auto` goes to MindSpore as it is (per-op casting, which 2.10 does on CPU), no O0 fallback."""
    from ascend_finetune.data.demo import CLASSES, make_shapes

    data = tmp_path / "data"
    make_shapes(
        str(data), per_class=20, size=32, seed=5, classes={k: CLASSES[k] for k in ("red circle", "green square")}
    )
    s = spec(data, name="auto", data={"val_split": 0.2}, train={"epochs": 1}, amp={"level": "auto"})
    run = tmp_path / "run"
    code, out = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(run))
    assert code == 0, out
    evs = events(run)
    assert of_type(evs, "run_started")[0]["amp"]["level"] == "auto"
    assert not [w for w in of_type(evs, "warning") if w["code"] == "amp_auto_cpu"]
    steps = of_type(evs, "step")
    assert len(steps) == 2 and all(st["loss"] is not None and not st["skipped"] for st in steps), steps
