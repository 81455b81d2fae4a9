"""Early stopping and the plateau schedule on two ranks through msrun (two CPU workers on this host).

Rank 0 alone evaluates, so it alone decides; its decisions reach the other rank at the epoch's end
(RankStrategy.from_leader). These runs show the effect a user cares about: both ranks stop after
the same epoch, and both lower the rate at the same update (the weights stay equal across ranks,
which they would not if one rank kept the old rate). Real msrun, real data parallel, as test_msrun.
"""

from __future__ import annotations

import json

import pytest
from conftest import events, of_type, spec, write_spec
from test_msrun import TWO_RANKS, assert_no_orphans, cli, rank_verdicts, small_data  # noqa: F401 (a fixture)
from test_msrun import pytestmark as pytestmark  # skipped without msrun, as test_msrun

# A frozen backbone keeps these runs short; the head alone trains.
BASE = {"model": {"freeze": "backbone"}, "data": {"batch_size": 8, "workers": 1, "augment": "none"}}


def _train(tmp_path, data, name: str, train: dict):
    s = spec(data, name=name, train=train, **BASE, **TWO_RANKS)
    run_dir = tmp_path / "run"
    code, out = cli("train", str(write_spec(tmp_path / f"{name}.json", s)), "--run-dir", str(run_dir))
    assert code == 0, out
    return run_dir


def test_early_stopping_ends_both_ranks_after_the_same_epoch(tmp_path, small_data):  # noqa: F811
    # A rate too small to move the head: val_loss stalls, so patience 2 ends the run after epoch 3 of 6.
    run = _train(
        tmp_path,
        small_data,
        "es",
        {"epochs": 6, "lr": 1e-10, "early_stopping": {"metric": "val_loss", "patience": 2, "min_delta": 1e-3}},
    )
    evs = events(run)
    started, fin = of_type(evs, "run_started")[0], evs[-1]
    spe = started["steps_per_epoch"]
    assert fin["type"] == "run_finished" and fin["status"] == "completed", fin
    assert fin["early_stop"]["epoch"] == 3 and fin["early_stop"]["best_epoch"] == 1
    assert [e["epoch"] for e in of_type(evs, "epoch_end")] == [1, 2, 3]
    assert fin["final"]["step"] == 3 * spe < started["total_steps"]
    verdicts = rank_verdicts(run)
    assert {r: (v["status"], v["step"]) for r, v in verdicts.items()} == {
        0: ("completed", 3 * spe),
        1: ("completed", 3 * spe),
    }, "the other rank stopped with rank 0, at the same step"
    assert verdicts[0]["weights_l1"] == pytest.approx(verdicts[1]["weights_l1"], rel=1e-9)
    status = json.loads((run / "status.json").read_text())
    assert status["state"] == "completed" and status["exit_code"] == 0
    assert_no_orphans(run)


def test_plateau_on_val_acc_lowers_the_rate_on_both_ranks_at_the_same_update(tmp_path, small_data):  # noqa: F811
    # min_delta 1: val_acc can never improve by more, so every epoch after the first is a plateau
    # (patience 0): the rate halves after epochs 2 and 3; epoch 3 trains at half the rate.
    run = _train(
        tmp_path,
        small_data,
        "pl",
        {
            "epochs": 3,
            "lr": 0.05,
            "lr_schedule": "plateau",
            "plateau": {"metric": "val_acc", "patience": 0, "factor": 0.5, "min_delta": 1.0},
        },
    )
    evs = events(run)
    assert evs[-1]["status"] == "completed"
    assert [(d["epoch"], d["lr"]) for d in of_type(evs, "lr_reduced")] == [
        (2, pytest.approx(0.025)),
        (3, pytest.approx(0.0125)),
    ]
    lrs = {}
    for s in of_type(evs, "step"):
        lrs.setdefault(s["epoch"], set()).add(round(s["lr"], 9))
    assert lrs == {1: {0.05}, 2: {0.05}, 3: {0.025}}
    # Each rank applies its own optimizer to the averaged gradients: had rank 1 kept 0.05 in epoch 3,
    # its head would have moved twice as far as rank 0's.
    verdicts = rank_verdicts(run)
    assert {r: (v["status"], v["step"]) for r, v in verdicts.items()} == {
        0: ("completed", 3 * of_type(evs, "run_started")[0]["steps_per_epoch"]),
        1: ("completed", 3 * of_type(evs, "run_started")[0]["steps_per_epoch"]),
    }
    assert verdicts[0]["weights_l1"] == pytest.approx(verdicts[1]["weights_l1"], rel=1e-9)
    assert_no_orphans(run)
