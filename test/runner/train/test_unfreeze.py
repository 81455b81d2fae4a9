"""Gradual unfreezing (model.unfreeze) on a real CPU run: which tensors move changes at the named epoch,
the event says what unfroze, and a resume keeps the schedule's position (before and after the change)."""

from __future__ import annotations

import json

import mindspore as ms
import numpy as np
import pytest
from conftest import events, of_type, runner, spec, write_spec

from ascend_finetune.data.folder import DataError
from ascend_finetune.spec import SpecError, resolve
from ascend_finetune.train import unfreeze


def _load(path):
    return {k: v.asnumpy() for k, v in ms.load_checkpoint(str(path)).items()}


def _moved(a, b, prefix):
    return [k for k in a if k.startswith(prefix) and not np.array_equal(a[k], b[k])]


@pytest.fixture(scope="module")
def unfrozen_run(data_a, tmp_path_factory):
    d = tmp_path_factory.mktemp("unfreeze")
    s = spec(
        data_a,
        name="unf",
        model={"freeze": "backbone", "unfreeze": [{"epoch": 2, "freeze": "up_to:layer3"}]},
        train={"epochs": 2, "lr": 0.01},
        checkpoint={"every_steps": 2, "keep_max": 50},
    )
    code, out = runner("train", str(write_spec(d / "s.json", s)), "--run-dir", str(d / "run"))
    assert code == 0, out
    return d


def test_which_tensors_move_changes_at_the_named_epoch(unfrozen_run):
    run = unfrozen_run / "run"
    evs = events(run)
    spe = of_type(evs, "run_started")[0]["steps_per_epoch"]
    [ev] = of_type(evs, "unfreeze")
    assert ev["epoch"] == 2 and ev["step"] == spe and ev["freeze"] == "up_to:layer3" and ev["unfrozen"] == ["layer4"]
    first_step_of_2 = next(e for e in evs if e["type"] == "step" and e["epoch"] == 2)
    assert ev["seq"] < first_step_of_2["seq"], "said before epoch 2 trains"
    cks = {c["step"]: run / c["file"] for c in of_type(evs, "checkpoint")}
    early, end1, end2 = _load(cks[2]), _load(cks[spe]), _load(cks[2 * spe])
    # epoch 1 (backbone frozen): only the head moves, BatchNorm statistics included
    assert _moved(early, end1, "backbone.") == []
    assert _moved(early, end1, "head.")
    # epoch 2 (up_to:layer3): layer4 trains, with batch statistics; the stem and layer1-3 stay
    moved = _moved(end1, end2, "backbone.")
    assert moved and all(k.startswith("backbone.layer4.") for k in moved)
    assert any("conv" in k for k in moved) and any("moving_mean" in k for k in moved)
    assert any(k.startswith("moments.backbone.layer4.") for k in end2), "the optimizer gained layer4's state"
    assert not any(k.startswith("moments.backbone.layer4.") for k in end1)


def test_resume_keeps_the_schedule_position(unfrozen_run):
    d = unfrozen_run
    evs = events(d / "run")
    spe = of_type(evs, "run_started")[0]["steps_per_epoch"]
    cks = {c["step"]: d / "run" / c["file"] for c in of_type(evs, "checkpoint")}
    mid2 = next(s for s in sorted(cks) if s > spe and s % spe)
    for name, start in (("from_end_of_1", spe), ("from_mid_2", mid2)):
        code, out = runner("train", str(d / "s.json"), "--run-dir", str(d / name), "--resume", str(cks[start]))
        assert code == 0, (name, out)
        rev = events(d / name)
        assert rev[-1]["status"] == "completed"
        unf = of_type(rev, "unfreeze")
        if start == spe:  # the change is still ahead: it happens, at the same place
            assert [(u["epoch"], u["step"], u["unfrozen"]) for u in unf] == [(2, spe, ["layer4"])]
        else:  # already made: the resume rebuilt it before loading layer4's optimizer state
            assert unf == []
        last = _load(d / name / of_type(rev, "checkpoint")[-1]["file"])
        assert _moved(_load(cks[start]), last, "backbone.layer4."), "layer4 keeps training"
        assert not _moved(_load(cks[start]), last, "backbone.layer3.")


def test_a_schedule_that_freezes_more_is_refused_by_the_spec_check_and_still_by_the_run(data_a):
    bad = spec(data_a, model={"freeze": "up_to:layer2", "unfreeze": [{"epoch": 2, "freeze": "backbone"}]})
    with pytest.raises(SpecError) as refused:
        resolve(bad)
    [problem] = refused.value.problems
    assert problem.path == "model.unfreeze[0].freeze" and "up_to:layer1, up_to:layer2" in problem.fix
    # The run's own guard, for a spec that never met the check (a spec.json edited by hand)
    s = resolve(spec(data_a, model={"freeze": "up_to:layer2"}))
    s["model"]["unfreeze"] = [{"epoch": 2, "freeze": "backbone"}]
    with pytest.raises(DataError) as e:
        unfreeze.check(s)
    assert e.value.path == "model.unfreeze[0]" and "increasing epochs" in e.value.fix
    assert e.value.why == "unfreeze_out_of_order"
    assert e.value.params == {"index": 0, "epoch": 2, "freeze": "backbone", "previous_epoch": 1}
    json.dumps(e.value.message)
