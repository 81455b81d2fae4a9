"""The health verdict beside a run's status (train/verdict.py): each reason on a recorded event list,
then on real short CPU runs that produce it, and a healthy transfer run that gets none.

Real runs (resnet18, 32 px, 12 steps each; about 45 s on 2 shared cores, plus the conftest's task-A
run when nothing else made it): `diverged` (O0, lr 100: the loss climbs to 1e25; 3-image val set),
`nan` (O2 without loss scaling, lr 100: fp16 overflows to NaN), `stuck` (identical images in 4
classes, frozen random backbone, O2 with a dynamic scale from 2^28 on CPU), `healthy`, and `wrecked`
(a transfer whose last epoch unfreezes the backbone at AdamW 0.1: 150 validation images, 36 steps,
about 30 s).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import TASK_B, events, make_shapes, of_type, runner, spec, write_spec

from ascend_finetune.data.folder import stratified_split
from ascend_finetune.train import verdict as V


def _codes(health: dict) -> list[str]:
    return [r["code"] for r in health["reasons"]]


def _started(num_val: int = 40, classes: int = 4, resumed: int | None = None) -> dict:
    return {
        "type": "run_started",
        "classes": [f"c{i}" for i in range(classes)],
        "num_val": num_val,
        "resumed_from": {"file": "x.ckpt", "step": resumed} if resumed is not None else None,
    }


def _steps(losses: list, start: int = 1, overflow: list | None = None) -> list[dict]:
    return [
        {
            "type": "step",
            "step": start + i,
            "loss": loss,
            "overflow": bool(overflow and overflow[i]),
            "skipped": bool(overflow and overflow[i]) or loss is None,
        }
        for i, loss in enumerate(losses)
    ]


def _eval(step: int, acc: float, counts: list[int], loss: float = 1.0, epoch: int | None = None) -> dict:
    return {
        "type": "eval",
        **({"epoch": epoch} if epoch is not None else {}),
        "step": step,
        "val_acc": acc,
        "val_loss": loss,
        "confusion": [[c if j == 0 else 0 for j in range(len(counts))] for c in counts],
        "nonfinite": 0,
    }


SPEC = {"model": {"freeze": "none", "pretrained": None}}


def _judge(
    evs: list[dict],
    status: str = "completed",
    spec_: dict = SPEC,
    error: dict | None = None,
) -> dict:
    return V.judge(V.record_events(spec_, evs), status, error)


def test_a_learning_run_is_healthy():
    evs = [
        _started(),
        *_steps([1.4, 1.3, 1.2, 1.0, 0.8, 0.6, 0.5, 0.4]),
        _eval(8, 0.9, [10, 10, 10, 10]),
    ]
    assert _judge(evs) == {"verdict": "healthy", "reasons": []}


def test_loss_rose_compares_robust_windows():
    rising = [9.0, 9.5, 10.0, 40.0, 300.0, 2000.0]
    h = _judge([_started(), *_steps(rising)])
    (r,) = h["reasons"]
    assert h["verdict"] == "problems" and r["code"] == "loss_rose"
    assert r["early_loss"] == 9.5 and r["late_loss"] == 300.0 and r["window"] == 3 and r["steps"] == 6
    assert r["message"] and r["fix"]
    # one spike at the end is not a rise (medians), nor is a small absolute change, nor too few steps
    assert _judge([_started(), *_steps([1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 50.0])])["reasons"] == []
    assert _judge([_started(), *_steps([0.01, 0.01, 0.01, 0.05, 0.05, 0.05])])["reasons"] == []
    assert _judge([_started(), *_steps([1.0, 5.0, 50.0, 500.0, 5000.0])])["reasons"] == []


def test_nonfinite_steps_are_counted():
    (r,) = _judge([_started(), *_steps([1.0, None, 0.9, None])])["reasons"]
    assert (r["code"], r["count"], r["steps"]) == ("nonfinite_steps", 2, 4)


def test_most_updates_skipped_by_loss_scaling():
    (r,) = _judge([_started(), *_steps([1.0] * 12, overflow=[True] * 7 + [False] * 5)])["reasons"]
    assert (r["code"], r["skipped"], r["steps"]) == ("updates_skipped", 7, 12)
    assert r["share"] == pytest.approx(7 / 12)
    assert _judge([_started(), *_steps([1.0] * 12, overflow=[True] * 6 + [False] * 6)])["reasons"] == []


def _sink(first: int, last: int, overflows: int | None, last_overflowed: bool = False) -> dict:
    """A sink's step event: its flags are its last step's; `overflows` None is an older runner's."""
    ev = {
        "type": "step",
        "step": last,
        "first_step": first,
        "loss": 1.0,
        "mean_loss": 1.0,
        "overflow": last_overflowed,
        "skipped": last_overflowed,
    }
    if overflows is not None:
        ev.update(overflows=overflows, skipped_updates=overflows)
    return ev


def test_overflows_inside_sinks_count_as_skipped_updates():
    """Three sinks of 4 steps whose first three steps overflowed and the last did not (a start-up
    burst that ends before each sink's end): 9 of 12 updates skipped, while every event's own
    flag says its last step was fine."""
    sinks = [_sink(1, 4, 3), _sink(5, 8, 3), _sink(9, 12, 3)]
    (r,) = _judge([_started(), *sinks])["reasons"]
    assert (r["code"], r["skipped"], r["steps"]) == ("updates_skipped", 9, 12)
    assert r["share"] == pytest.approx(9 / 12)
    # a sink's steps count in the share's denominator too: 5 of 12 is not most
    assert _judge([_started(), _sink(1, 4, 3), _sink(5, 8, 2), _sink(9, 12, 0)])["reasons"] == []


def test_loss_windows_over_sinks_say_the_steps_they_cover():
    # 30 sink events of 4 steps each, the loss climbing: the window is 6 events, 24 steps each end
    evs = [{**_sink(4 * i + 1, 4 * i + 4, 0), "loss": 1.0 + i, "mean_loss": 1.0 + i} for i in range(30)]
    (r,) = [r for r in _judge([_started(), *evs])["reasons"] if r["code"] == "loss_rose"]
    assert (r["window"], r["first_steps"], r["last_steps"]) == (6, 24, 24)
    assert "over the first 24 steps" in r["message"] and "over the last 24." in r["message"]
    # without a sink an event is a step: the same numbers
    (r,) = _judge([_started(), *_steps([1.0 + i for i in range(30)])])["reasons"]
    assert (r["code"], r["window"], r["first_steps"], r["last_steps"]) == ("loss_rose", 6, 6, 6)


def test_sink_events_of_an_older_runner_keep_their_one_flag_meaning():
    old = [_sink(1, 4, None, True), _sink(5, 8, None, True), _sink(9, 12, None, True), _sink(13, 16, None)]
    (r,) = _judge([_started(), *old])["reasons"]
    assert (r["code"], r["skipped"], r["steps"]) == ("updates_skipped", 3, 4)


def test_sink_counts_out_of_range_are_not_trusted():
    """overflows above the sink's size (or negative) fall back to the last step's flag."""
    bad = [{**_sink(1, 4, None), "overflows": 9, "skipped_updates": 9} for _ in range(1)]
    bad += [{**_sink(5 + 4 * i, 8 + 4 * i, None), "overflows": -1} for i in range(3)]
    assert _judge([_started(), *bad])["reasons"] == []


def test_frozen_random_backbone_uses_the_preflight_rule():
    frozen = {"model": {"freeze": "up_to:layer2", "pretrained": None}}
    (r,) = _judge([], spec_=frozen)["reasons"]
    assert (r["code"], r["freeze"]) == ("frozen_random_backbone", "up_to:layer2")
    assert _judge([], spec_={"model": {"freeze": "backbone", "pretrained": "/w/r.ckpt"}})["reasons"] == []
    assert _judge([], spec_={"name": "invalid"})["reasons"] == [], "a spec that never loaded"


def test_chance_level_takes_the_val_set_size_and_its_largest_class_into_account():
    even = [10, 10, 10, 10]
    (r,) = _judge([_started(), _eval(4, 0.25, even), _eval(8, 0.35, even)])["reasons"]
    assert r["code"] == "chance_level" and r["best_val_acc"] == 0.35 and r["chance"] == 0.25
    assert r["margin"] == pytest.approx(2 * (0.25 * 0.75 / 40) ** 0.5) and (
        r["num_classes"],
        r["num_val"],
    ) == (4, 40)
    assert _judge([_started(), _eval(8, 0.40, even)])["reasons"] == [], "past 2 standard errors"
    # a model that always answers the largest class gets its share: that is chance here
    skewed = [34, 5, 5, 6]
    (r,) = _judge([_started(num_val=50), _eval(8, 0.80, skewed)])["reasons"]
    assert r["code"] == "chance_level" and r["chance"] == pytest.approx(34 / 50)


def test_a_falling_training_loss_at_chance_says_the_network_fits_only_its_training_images():
    """MnasNet-0.5 from random weights, 4 epochs at 64 px, as recorded: train loss 2.11 -> 1.19 while every
    validation image got one class (1/6): chance_level, and fits_train_only beside it."""
    even = [12] * 6
    falling = [2.3 - 0.01 * i for i in range(160)]
    (chance, fits) = _judge([_started(num_val=72, classes=6), *_steps(falling), _eval(160, 1 / 6, even)])["reasons"]
    assert chance["code"] == "chance_level" and fits["code"] == "fits_train_only"
    assert fits["window"] == 32 and fits["early_loss"] == pytest.approx(2.145) and fits["late_loss"] < 0.9
    assert fits["best_val_acc"] == pytest.approx(1 / 6) and "BatchNorm" in fits["fix"]
    # a loss that did not fall (identical images, a stuck run) gets chance_level alone
    flat = [1.40, 1.39, 1.38] * 20
    assert _codes(_judge([_started(num_val=72, classes=6), *_steps(flat), _eval(60, 1 / 6, even)])) == ["chance_level"]
    # a loss that fell from a random head's 40 to ln 6 learnt only to guess uniformly: chance_level alone
    to_guess = [40.0 - (40.0 - 1.79) * min(1.0, i / 80) for i in range(160)]
    h = _judge([_started(num_val=72, classes=6), *_steps(to_guess), _eval(160, 1 / 6, even)])
    assert _codes(h) == ["chance_level"]
    # and a learning run is not at chance, whatever its loss did
    assert _judge([_started(num_val=72, classes=6), *_steps(falling), _eval(160, 0.9, even)])["reasons"] == []


def test_a_fall_from_the_best_accuracy_is_reported_with_the_checkpoint_to_use():
    """mindcv's MobileViT-S on the transfer test's task A' (72 images, 6 classes) at a constant 5e-4, as
    recorded: 0.94 after epoch 7, 0.43 after epoch 8, its training loss rising at the end."""
    six = [12] * 6
    curve = [(1, 0.17), (4, 0.72), (7, 0.944), (8, 0.431)]
    evs = [_started(num_val=72, classes=6), *[_eval(40 * e, acc, six, epoch=e) for e, acc in curve]]
    (r,) = _judge(evs)["reasons"]
    assert r["code"] == "val_fell" and (r["best_epoch"], r["last_epoch"]) == (7, 8)
    assert (r["best_val_acc"], r["last_val_acc"], r["num_val"]) == (0.944, 0.431, 72)
    assert "94.4% at epoch 7" in r["message"] and "43.1%" in r["message"]
    assert "best checkpoint, epoch 7 (starred)" in r["fix"] and '"cosine"' in r["fix"] and not r["best_ema"]
    # the bar: 3 standard errors of the difference on 72 images, and at least 10 points
    assert r["noise"] == pytest.approx(3 * ((0.944 * 0.056 + 0.431 * 0.569) / 72) ** 0.5)
    # already cosine: a lower rate; keep_best off: the best may be gone
    h = _judge(evs, spec_={**SPEC, "train": {"lr_schedule": "cosine"}, "checkpoint": {"keep_best": False}})
    (r,) = h["reasons"]
    assert "cosine" not in r["fix"] and "lower train.lr" in r["fix"] and "keep_best is off" in r["fix"]
    # an older runner's evals without an epoch name the step
    (r,) = _judge([_started(num_val=72, classes=6), _eval(280, 0.944, six), _eval(320, 0.431, six)])["reasons"]
    assert "at step 280" in r["message"] and r["best_epoch"] is None


def test_the_fall_is_from_the_checkpoint_the_run_stars_ema_weights_included():
    """The best is the one checkpoints.manifest.mark_best stars: on a tie of val_acc the lower val_loss,
    then the later step; with train.ema, the EMA weights' evaluation (their own checkpoint) too."""
    six = [12] * 6
    tie = [_eval(200, 0.944, six, loss=0.3, epoch=5), _eval(280, 0.944, six, loss=0.2, epoch=7)]
    (r,) = _judge([_started(72, 6), *tie, _eval(320, 0.431, six, epoch=8)])["reasons"]
    assert (r["best_epoch"], r["best_step"]) == (7, 280), "the lower val_loss"
    same = [_eval(200, 0.944, six, loss=0.2, epoch=5), _eval(280, 0.944, six, loss=0.2, epoch=7)]
    (r,) = _judge([_started(72, 6), *same, _eval(320, 0.431, six, epoch=8)])["reasons"]
    assert r["best_epoch"] == 7, "then the later step"

    def with_ema(e: dict, acc: float) -> dict:
        return {**e, "ema": {"val_acc": acc, "val_loss": 0.5, "per_class_acc": []}}

    raw = [_eval(240, 0.90, six, epoch=6), _eval(280, 0.944, six, epoch=7), _eval(320, 0.431, six, epoch=8)]
    # the EMA weights ended on their best: the run has that checkpoint, nothing fell
    ema = [with_ema(e, a) for e, a in zip(raw, (0.93, 0.95, 0.96))]
    assert _judge([_started(72, 6), *ema])["reasons"] == []
    # the EMA weights were best at epoch 7 and fell too: the fix names that checkpoint
    ema = [with_ema(e, a) for e, a in zip(raw, (0.93, 0.97, 0.45))]
    (r,) = _judge([_started(72, 6), *ema])["reasons"]
    assert r["best_ema"] and r["best_val_acc"] == 0.97 and r["last_val_acc"] == 0.45
    assert "best checkpoint, epoch 7 with the EMA weights (starred)" in r["fix"]


def test_a_dip_within_the_noise_or_a_run_that_ends_on_its_best_is_not_a_fall():
    even = [10] * 4
    # 100% then 90% on 40 images: 3 standard errors are 14 points
    assert _judge([_started(), _eval(4, 1.0, even, epoch=1), _eval(8, 0.9, even, epoch=2)])["reasons"] == []
    # on 400 images 12 points are more than 3 standard errors (5 points)
    big = [100] * 4
    h = _judge([_started(num_val=400), _eval(4, 1.0, big, epoch=1), _eval(8, 0.88, big, epoch=2)])
    assert _codes(h) == ["val_fell"]
    # but not 9 points, however many images
    h = _judge([_started(num_val=4000), _eval(4, 0.95, [1000] * 4), _eval(8, 0.86, [1000] * 4)])
    assert h["reasons"] == []
    assert _judge([_started(), _eval(4, 0.5, even), _eval(8, 0.9, even), _eval(12, 0.9, even)])["reasons"] == []
    # a best at chance is no best to fall from; a small validation set is not judged
    assert _codes(_judge([_started(), _eval(4, 0.35, even), _eval(8, 0.0, even)])) == ["chance_level"]
    small = [3] * 4
    assert _codes(_judge([_started(num_val=12), _eval(4, 1.0, small), _eval(8, 0.0, small)])) == ["val_too_small"]


def test_a_small_val_set_is_reported_and_not_judged_for_chance():
    (r,) = _judge([_started(num_val=3, classes=3), _eval(4, 0.33, [1, 1, 1])])["reasons"]
    assert (r["code"], r["num_val"], r["smallest_class"]) == ("val_too_small", 3, 1)
    assert (r["min_val"], r["min_per_class"]) == (V.MIN_VAL_IMAGES, V.MIN_VAL_PER_CLASS)
    (r,) = _judge([_started(num_val=40), _eval(4, 0.9, [25, 4, 6, 5])])["reasons"]
    assert (r["code"], r["smallest_class"]) == ("val_too_small", 4), "a class under 5"
    (r,) = _judge([_started(num_val=0)])["reasons"]
    assert (r["code"], r["num_val"], r["smallest_class"]) == (
        "val_too_small",
        0,
        None,
    ), "no val set at all"


def _fix(split, num_val: int, counts: list[int], val: str | None = None) -> dict:
    data = {"val_split": split, "val": val}
    evs = [_started(num_val=num_val, classes=len(counts)), _eval(4, 0.5, counts)]
    (r,) = _judge(evs, spec_={**SPEC, "data": data})["reasons"]
    return r


def test_a_small_val_sets_fix_says_what_would_hold_out_enough():
    # The e2e's run: 10 images a class, 0.2 held out (2 each). "Raise it to 0.2" was the advice; no
    # split up to 0.3 holds out 5 of 10, so: add images, 23 a class (round(23 * 0.2) = 5 each, 20 in
    # all), which a stratified split of that many really gives.
    r = _fix(0.2, 8, [2, 2, 2, 2])
    got = (r["val_from"], r["val_split"], r["suggested_split"], r["images_per_class"])
    assert got == ("split", 0.2, None, 23)
    assert r["fix"].startswith("Add images: at data.val_split 0.2 a class needs about 23 ")
    assert _held_out_per_class(23, 4, 0.2) == [5] * 4 and _held_out_per_class(22, 4, 0.2) == [4] * 4
    # three classes need more each for 20 in all (round(33 * 0.2) = 7)
    assert _fix(0.2, 6, [2, 2, 2])["images_per_class"] == 33
    # a small split with enough images: the smallest raise that holds out enough, up to 0.3
    r = _fix(0.1, 16, [4, 4, 4, 4])  # 35 to 44 images a class
    assert (r["suggested_split"], r["images_per_class"]) == (0.15, None)
    assert r["fix"].startswith("Raise data.val_split from 0.1 to 0.15, or point data.val")
    assert min(_held_out_per_class(35, 4, 0.15)) >= V.MIN_VAL_PER_CLASS
    # 15 a class at 0.1 holds out 2 (round(1.5)); scaling 0.1 by 5/2 said 0.25, which holds out 4
    # (round(3.75)), and 0.3 holds out round(4.5) = 4: no raise is enough, add images (46: round(4.6))
    r = _fix(0.1, 8, [2, 2, 2, 2])
    assert (r["suggested_split"], r["images_per_class"]) == (None, 46)
    # a class that held out nothing (one image) gets nothing from any split: add images
    assert _fix(0.1, 18, [6, 6, 6, 0])["images_per_class"] == 46
    # no split at all, and a val folder: the folder's needs
    assert _fix(0, 0, [])["fix"].startswith("Set data.val_split (0.2 holds out a fifth of data.train)")
    r = _fix(0.2, 3, [1, 1, 1], val="/data/val")
    assert (r["val_from"], r["val_split"]) == ("folder", None)
    assert r["fix"] == "Point data.val at a folder with at least 5 images per class and 20 in all."


def _held_out_per_class(per: int, classes: int, split: float) -> list[int]:
    """What the runner's own split holds out of `classes` classes of `per` images each."""
    samples = [(f"{c}/{i}.png", c) for c in range(classes) for i in range(per)]
    _, val = stratified_split(samples, split, 0)
    return [sum(1 for _, c in val if c == k) for k in range(classes)]


def test_a_failed_run_has_problems_and_says_why():
    h = _judge(
        [],
        "failed",
        error={
            "kind": "bad_input",
            "code": "too_few_classes",
            "params": {"count": 1, "folder": "/d"},
            "message": "no classes",
            "fix": "add folders",
        },
    )
    assert h["verdict"] == "problems"
    assert h["reasons"] == [
        {
            "code": "run_failed",
            "message": "The run failed (bad_input): no classes",
            "fix": "add folders",
            "kind": "bad_input",
            "error": "no classes",  # the error's words and fix, for a reworded reason to quote
            "error_fix": "add folders",
            "error_code": "too_few_classes",  # and its code and parameters, for the error to be worded too
            "error_params": {"count": 1, "folder": "/d"},
        }
    ]
    (no_fix,) = _judge([], "failed", error={"kind": "oom", "message": "out of memory"})["reasons"]
    assert no_fix["error_fix"] is None and no_fix["fix"].startswith("Read the run's error")
    assert no_fix["error_code"] is None and no_fix["error_params"] is None  # an error from an older runner


def test_a_resume_drops_the_steps_it_redid_and_a_new_run_starts_afresh():
    rising = [*_steps([1.0, 1.0, 1.0, 50.0, 60.0, 70.0])]
    resumed = [
        _started(),
        *rising[:3],
        _started(resumed=3),
        *_steps([0.9, 0.8, 0.7], start=4),
    ]
    assert _judge(resumed)["reasons"] == [], "the climbing steps 4-6 were redone after the resume"
    assert _judge([_started(), *_steps([None] * 3), _started(), *_steps([1.0])])["reasons"] == []


def test_judge_log_reads_the_file_and_passes_over_torn_and_bad_lines(tmp_path):
    path = tmp_path / "events.jsonl"
    lines = [json.dumps(e) for e in [_started(), *_steps([1.0, None])]]
    path.write_bytes(("\n".join(lines[:2]) + "\n\x00\x00\n" + lines[2] + "\n" + '{"type": "st').encode())
    h = V.judge_log(str(path), SPEC, "completed", None)
    assert _codes(h) == ["nonfinite_steps"] and h["reasons"][0]["steps"] == 2
    assert V.judge_log(str(tmp_path / "missing.jsonl"), SPEC, "stopped", None)["verdict"] == "healthy"


# -- real runs -------------------------------------------------------------------------------------


def _train(d: Path, s: dict) -> tuple[Path, dict]:
    code, out = runner("train", str(write_spec(d / "s.json", s)), "--run-dir", str(d / "run"))
    assert code == 0, out
    finished = of_type(events(d / "run"), "run_finished")[-1]
    return d / "run", finished


@pytest.fixture(scope="module")
def three_class(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("three")
    make_shapes(str(d / "train"), per_class=16, size=32, seed=3, classes=TASK_B)
    make_shapes(str(d / "val"), per_class=1, size=32, seed=4, classes=TASK_B)  # a 3-image val set
    return d / "train", d / "val"


def _diverging(data: tuple[Path, Path], level: str) -> dict:
    train, val = data
    return spec(
        train,
        name=f"diverge-{level}",
        data={"val": str(val), "batch_size": 8},
        amp={"level": level, "loss_scale": "none"},
        train={"epochs": 2, "lr": 100.0, "max_nonfinite_steps": 1000},
    )


def test_a_diverging_run_reports_the_rising_loss_and_its_tiny_val_set(three_class, tmp_path):
    run, finished = _train(tmp_path, _diverging(three_class, "O0"))
    assert finished["status"] == "completed"
    h = finished["health"]
    assert h["verdict"] == "problems" and _codes(h) == ["loss_rose", "val_too_small"]
    rose, small = h["reasons"]
    assert rose["late_loss"] > 1000 * rose["early_loss"]
    assert (small["num_val"], small["smallest_class"]) == (3, 1)
    assert json.loads((run / "status.json").read_text())["health"] == h, "status.json carries the same verdict"


def test_a_run_whose_loss_turns_nan_counts_the_steps(three_class, tmp_path):
    _, finished = _train(tmp_path, _diverging(three_class, "O2"))
    h = finished["health"]
    assert _codes(h) == ["nonfinite_steps", "val_too_small"]
    nan = h["reasons"][0]
    steps = of_type(events(tmp_path / "run"), "step")
    assert nan["count"] == sum(s["loss"] is None for s in steps) >= 6 and nan["steps"] == len(steps) == 12


@pytest.fixture(scope="module")
def stuck_run(tmp_path_factory) -> tuple[Path, dict]:
    """The same grey image in 4 class folders: nothing tells the classes apart, so every prediction is
    one class and the accuracy is that class's share, 25%, at every eval (a tie)."""
    from PIL import Image

    d = tmp_path_factory.mktemp("stuck")
    for c in range(4):
        os.makedirs(d / "data" / f"class{c}")
        for i in range(24):
            Image.new("RGB", (32, 32), (120, 120, 120)).save(d / "data" / f"class{c}" / f"{i}.png")
    s = spec(
        d / "data",
        name="stuck",
        data={"val_split": 0.25},  # 24 val images, 6 per class: large enough to judge
        model={"freeze": "backbone"},
        amp={"level": "O2", "loss_scale": "dynamic", "init_scale": 2.0**28},
        train={"epochs": 3, "lr": 0.05},
    )
    return _train(d, s)


def test_a_stuck_run_reports_chance_skipped_updates_and_the_frozen_random_backbone(
    stuck_run,
):
    run, finished = stuck_run
    h = finished["health"]
    assert finished["status"] == "completed"
    assert _codes(h) == ["updates_skipped", "frozen_random_backbone", "chance_level"]
    skipped, frozen, chance = h["reasons"]
    steps = of_type(events(run), "step")
    assert skipped["skipped"] == sum(s["overflow"] for s in steps) > len(steps) / 2 and skipped["steps"] == 12
    assert frozen["freeze"] == "backbone"
    assert chance["best_val_acc"] == 0.25 and chance["chance"] == 0.25 and chance["num_val"] == 24
    # the ls view of the same run
    code, out = runner("ls", str(run.parent))
    assert code == 0 and out["runs"][0]["health"] == h


def test_a_val_acc_tie_on_a_real_run_goes_to_the_lowest_val_loss(stuck_run):
    run, finished = stuck_run
    manifest = json.loads((run / "checkpoints.json").read_text())
    assert len({e["metrics"]["val_acc"] for e in manifest}) == 1, "every epoch at 25%"
    lowest = min(e["metrics"]["val_loss"] for e in manifest)
    best = [e for e in manifest if e["best"]]
    assert len(best) == 1 and best[0]["metrics"]["val_loss"] == lowest
    tied = [e["step"] for e in manifest if e["metrics"]["val_loss"] == lowest]
    assert best[0]["step"] == max(tied) and finished["best"]["step"] == best[0]["step"]


def test_a_transfer_that_learns_is_healthy(run_a, data_b, tmp_path):
    best = next(e for e in json.loads((run_a / "checkpoints.json").read_text()) if e["best"])
    s = spec(
        data_b,
        name="healthy",
        data={"val_split": 0.25},  # 24 val images, 8 per class
        model={"pretrained": str(run_a / best["file"]), "freeze": "backbone"},
        train={"epochs": 3, "optimizer": "adamw", "lr": 1e-3},
    )
    run, finished = _train(tmp_path, s)
    assert finished["health"] == {"verdict": "healthy", "reasons": []}, finished
    assert json.loads((run / "status.json").read_text())["health"] == finished["health"]


def test_a_transfer_wrecked_in_its_last_epoch_reports_the_fall_and_the_best_checkpoint(run_a, tmp_path):
    """A probe on task A's backbone for three epochs, then the whole backbone unfrozen for the last one at
    ten times the rate (AdamW 0.1 on pretrained weights): its accuracy falls, and the verdict names the
    best epoch, whose checkpoint the run kept. 150 validation images: on 24 (the healthy run's) a fall
    from 0.58 to 0.38 was within the noise, on 90 one from 0.62 to 0.39 only just beyond it."""
    data = tmp_path / "b"
    make_shapes(str(data), per_class=100, size=32, seed=4, classes=TASK_B)
    best = next(e for e in json.loads((run_a / "checkpoints.json").read_text()) if e["best"])
    s = spec(
        data,
        name="wrecked",
        data={"val_split": 0.5},
        model={
            "pretrained": str(run_a / best["file"]),
            "freeze": "backbone",
            "unfreeze": [{"epoch": 4, "freeze": "none"}],
        },
        train={"epochs": 4, "optimizer": "adamw", "lr": 1e-2, "backbone_lr_mult": 10.0},
    )
    run, finished = _train(tmp_path, s)
    evals = of_type(events(run), "eval")
    assert [e["epoch"] for e in evals] == [1, 2, 3, 4]
    # (a wreck this violent may also turn some losses to NaN: nonfinite_steps beside it is fair)
    assert "val_fell" in _codes(finished["health"]), finished
    r = next(x for x in finished["health"]["reasons"] if x["code"] == "val_fell")
    assert r["last_epoch"] == 4 and r["best_epoch"] in (1, 2, 3), r
    assert r["last_val_acc"] == evals[-1]["val_acc"] and r["best_val_acc"] == max(e["val_acc"] for e in evals)
    # the checkpoint the fix points at: kept, starred, and of that epoch
    (starred,) = [e for e in json.loads((run / "checkpoints.json").read_text()) if e["best"]]
    assert starred["epoch"] == r["best_epoch"] and (run / starred["file"]).is_file()
