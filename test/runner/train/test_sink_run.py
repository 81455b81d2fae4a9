"""The run loop in sink mode: one step event per sink, checkpoints at sink ends, stops between sinks.

CPU has no device queue (mindspore.data_sink raises there), so these runs put the test-only host
sink in its place (steps.HOST_SINK_ENV): the same calls as data_sink's kernel-by-kernel path, the
batches from the host. Everything else is the real run: real MindSpore training on CPU, the real
step cell with its in-graph sums, the real event log, checkpoints and control inbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, events, of_type, spec, wait_for, write_spec

from ascend_finetune.train.steps import HOST_SINK_ENV


@pytest.fixture(scope="module")
def sink_data(tmp_path_factory):
    from ascend_finetune.data.demo import make_shapes

    out = tmp_path_factory.mktemp("sink") / "shapes"
    make_shapes(str(out), per_class=16, size=32, seed=5)  # 48 train (batch 4: 12 steps an epoch), 16 val
    return out


def _spec(data, name, **over):
    # No augmentation and fp32 without loss scaling: the two runs compared below see the same batches
    # and compute the same steps.
    over.setdefault("amp", {"level": "O0", "loss_scale": "none"})
    return spec(
        data,
        name=name,
        data={"batch_size": 4, "workers": 1, "val_split": 0.25, "augment": "none"},
        checkpoint={"every_steps": 6, "keep_max": 10},
        sink={"enabled": True, "size": 5},
        **over,
    )


def _cli(*args, sink: bool, wait: bool = True):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"))
    env.pop(HOST_SINK_ENV, None)
    if sink:
        env[HOST_SINK_ENV] = "1"
    argv = [sys.executable, "-m", "ascend_finetune", *args]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    return r.returncode, (json.loads(lines[-1]) if lines else {"stderr": r.stderr[-3000:]})


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, sink_data):
    """The same spec trained step by step and in sinks."""
    d = tmp_path_factory.mktemp("runs")
    out = {}
    for mode in ("steps", "sinks"):
        path = write_spec(d / f"{mode}.json", _spec(sink_data, mode))
        code, doc = _cli("train", str(path), "--run-dir", str(d / mode), sink=mode == "sinks")
        assert code == 0, doc
        out[mode] = events(d / mode)
    return out


def test_a_sink_run_writes_one_step_event_per_sink_covering_every_step(two_runs):
    evs = two_runs["sinks"]
    started = of_type(evs, "run_started")[0]
    assert (started["steps_per_epoch"], started["total_steps"]) == (12, 24)
    # sink.size 5 does not divide the epoch's 12 steps: sinks of 4, and a warning that says so
    reduced = [w for w in of_type(evs, "warning") if w["code"] == "sink_size_reduced"]
    assert len(reduced) == 1 and "each sink runs 4 steps" in reduced[0]["message"]
    assert "sink_unavailable" not in [w["code"] for w in of_type(evs, "warning")]
    steps = of_type(evs, "step")
    assert [(e["first_step"], e["step"]) for e in steps] == [(s, s + 3) for s in range(1, 25, 4)]
    assert [e["epoch"] for e in steps] == [1, 1, 1, 2, 2, 2]
    for e in steps:
        assert "data_ms" not in e, "a sink's data wait is hidden in the queue: not reported as 0"
        assert e["step_ms"] > 0 and e["img_per_s"] == pytest.approx(4 / (e["step_ms"] / 1000), rel=0.02)
    assert of_type(evs, "run_finished")[-1]["status"] == "completed"


def test_a_sink_event_carries_its_last_steps_values_and_the_mean_loss_of_its_steps(two_runs):
    """Checked against the same spec trained step by step: same batches, same updates."""
    per_step = {e["step"]: e for e in of_type(two_runs["steps"], "step")}
    assert sorted(per_step) == list(range(1, 25)) and not any("first_step" in e for e in per_step.values())
    for e in of_type(two_runs["sinks"], "step"):
        losses = [per_step[s]["loss"] for s in range(e["first_step"], e["step"] + 1)]
        assert e["loss"] == pytest.approx(per_step[e["step"]]["loss"], rel=1e-4, abs=1e-5)
        assert e["mean_loss"] == pytest.approx(sum(losses) / len(losses), rel=1e-4, abs=1e-5)
        assert e["lr"] == pytest.approx(per_step[e["step"]]["lr"], rel=1e-6)
    # the epochs' train loss is the mean over every step, not over the sinks' last steps
    for a, b in zip(of_type(two_runs["sinks"], "epoch_end"), of_type(two_runs["steps"], "epoch_end")):
        assert a["train_loss"] == pytest.approx(b["train_loss"], rel=1e-4)


def test_checkpoints_land_on_the_first_sink_end_at_or_after_each_interval(two_runs):
    """every_steps 6 with sinks of 4: step 6 is inside the sink 5-8, so the checkpoint is at 8
    (and says so); 12 and 24 are epoch ends; 18 falls in the sink 17-20."""
    assert [c["step"] for c in of_type(two_runs["sinks"], "checkpoint")] == [8, 12, 20, 24]
    assert [c["step"] for c in of_type(two_runs["steps"], "checkpoint")] == [6, 12, 18, 24]


def test_a_stop_is_taken_between_sinks(tmp_path, sink_data):
    s = _spec(sink_data, "stop", train={"epochs": 30})
    code, out = _cli("launch", str(write_spec(tmp_path / "s.json", s)), "--runs-root", str(tmp_path / "r"), sink=True)
    assert code == 0, out
    run_dir = out["run_dir"]
    wait_for(lambda: of_type(events(run_dir), "step"), timeout=400, what="the first sink")
    code, out = _cli("control", run_dir, "stop", "--timeout", "300", sink=False)
    assert code == 0 and out["handled"] is True, out
    evs = events(run_dir)
    fin = evs[-1]
    assert fin["type"] == "run_finished" and fin["status"] == "stopped" and fin["final"]["stop_reason"] == "control"
    steps = of_type(evs, "step")
    assert fin["final"]["step"] == steps[-1]["step"] and fin["final"]["step"] % 4 == 0, "a whole sink, never a part"
    assert of_type(evs, "checkpoint")[-1]["step"] == fin["final"]["step"]


def test_a_sinks_overflows_and_skipped_updates_count_its_inside_steps(tmp_path, sink_data):
    """O2 with the dynamic scale's default 2^24 start overflows on the first steps on CPU (the
    start-up burst) and the burst ends inside a sink: the sink's event carries the overflows and
    skipped updates of all its steps, checked against the same spec trained step by step."""
    runs = {}
    for mode in ("steps", "sinks"):
        s = _spec(
            sink_data,
            f"o2-{mode}",
            amp={"level": "O2", "loss_scale": "dynamic", "init_scale": 2**24},
            train={"epochs": 1},
        )
        path = write_spec(tmp_path / f"{mode}.json", s)
        code, doc = _cli("train", str(path), "--run-dir", str(tmp_path / mode), sink=mode == "sinks")
        assert code == 0, doc
        runs[mode] = of_type(events(tmp_path / mode), "step")
    per_step = {e["step"]: e for e in runs["steps"]}
    assert not any("overflows" in e or "skipped_updates" in e for e in per_step.values()), "one step: its flags"
    inside = 0
    for e in runs["sinks"]:
        covered = [per_step[s] for s in range(e["first_step"], e["step"] + 1)]
        assert e["overflows"] == sum(c["overflow"] for c in covered)
        assert e["skipped_updates"] == sum(c["skipped"] for c in covered)
        inside += e["overflows"] - int(e["overflow"])
    assert inside > 0, "no overflow fell inside a sink: the test would not tell"
    assert sum(e["overflows"] for e in runs["sinks"]) == sum(e["overflow"] for e in runs["steps"])


def test_a_sinks_train_accuracy_is_the_mean_of_its_steps(two_runs):
    """The sink counts its steps' correct predictions in the graph (RunStep's sums): over the same
    batches and weights, the mean of the step-by-step run's train_acc over the sink's steps."""
    by_step = {e["step"]: e["train_acc"] for e in of_type(two_runs["steps"], "step")}
    sinks = of_type(two_runs["sinks"], "step")
    assert sinks and all("train_acc" in e for e in sinks)
    for e in sinks:
        covered = [by_step[s] for s in range(e["first_step"], e["step"] + 1)]
        assert e["train_acc"] == pytest.approx(sum(covered) / len(covered), abs=1e-6), e
