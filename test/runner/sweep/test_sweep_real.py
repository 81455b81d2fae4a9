"""Real sweeps on CPU: Optuna's grid sampler and median pruner over real MindSpore trainings of the
demo data, the scheduler killed mid-sweep and resumed, and sweep-stop on a study kept in SQLite.
Trials are tiny (resnet18 at 32 px, 3 epochs, 120 training images); most of a trial's time is
MindSpore's start-up."""

from __future__ import annotations

import json
import os
import signal
from collections import Counter

import pytest
from conftest import runner, wait_for

from ascend_finetune.control import request
from ascend_finetune.events import read_events
from ascend_finetune.rundir import effective_state


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "shapes"
    code, doc = runner("make-demo-data", str(out), "--per-class", "40", "--size", "32")
    assert code == 0, doc
    return out


BASE = """  name: t
  data: {{train: {data}, image_size: 32, batch_size: 8, workers: 1, val_split: 0.25}}
  model: {{backbone: resnet18, pretrained: null}}
  train: {{epochs: {epochs}}}
  amp: {{level: O0, loss_scale: none}}
  checkpoint: {{keep_max: 1}}
  device: {{target: CPU, telemetry_s: 0}}
"""


def events_of(sweep_dir):
    return read_events(os.path.join(sweep_dir, "events.jsonl"))


def test_a_grid_sweep_prunes_hopeless_trials_and_resumes_after_its_scheduler_is_killed(demo, tmp_path):
    spec = tmp_path / "lr.ascend-sweep.yaml"
    # lr 50 is hopeless (the weights blow up to NaN or chance level). The grid's order is fixed by its
    # seed, so this test is the same sweep each time: its first trials are sane ones, whose results
    # the median pruner needs before it can judge a trial (it prunes nothing before one completes).
    spec.write_text(
        "name: lr-freeze\nbase:\n"
        + BASE.format(data=demo, epochs=3)
        + "space:\n  train.lr: {choices: [0.02, 0.1, 50]}\n  model.freeze: {choices: [none, 'up_to:layer2']}\n"
        "objective: {metric: best_val_acc}\ntrials: 6\nsampler: grid\nseed: 2\n"
        "pruner: {kind: median, startup_trials: 1}\ndevices: {ids: [0, 1]}\nconcurrency: 2\n"
    )
    root = tmp_path / "runs"
    code, started = runner("sweep", str(spec), "--root", str(root), "--detach")
    assert code == 0, started
    sweep_dir = started["sweep_dir"]
    assert sweep_dir == str(root / "sweeps" / started["sweep_id"])

    # Kill the scheduler once a trial has reported its first epoch, with both trials' runs still going.
    wait_for(lambda: any(e["type"] == "trial_reported" for e in events_of(sweep_dir)), 300, "a reported epoch")
    os.kill(started["pid"], signal.SIGKILL)
    wait_for(lambda: effective_state(sweep_dir) == "lost", 30, "the killed scheduler to show lost")
    code, mid = runner("sweep-status", sweep_dir)
    assert code == 0 and mid["state"] == "lost", mid
    assert [t["state"] for t in mid["trials"]] == ["RUNNING", "RUNNING"]

    code, final = runner("sweep", sweep_dir, timeout=400)  # resume, in the foreground
    assert code == 0, final
    assert final["state"] == "completed"
    trials = final["trials"]
    assert final["counts"]["counted"] == 6 and len(trials) == 6  # no retries: no trial was lost
    assert sorted((t["params"]["train.lr"], t["params"]["model.freeze"]) for t in trials) == sorted(
        (lr, f) for lr in (0.02, 0.1, 50) for f in ("none", "up_to:layer2")
    )
    pruned = [t for t in trials if t["state"] == "PRUNED"]
    assert pruned, "the median pruner pruned no trial"
    for t in pruned:
        assert isinstance(t["pruned_at"], int) and t["pruned_at"] < 3  # stopped before its last epoch
    complete = [t for t in trials if t["state"] == "COMPLETE"]
    best = max(complete, key=lambda t: t["value"])
    assert final["best"]["number"] == best["number"] and final["best"]["params"] == best["params"]
    assert final["best"]["run_id"] == best["run_id"]
    if len(complete) >= 2:
        assert set(final["importances"]) == {"train.lr", "model.freeze"}

    # Every trial ran exactly once: one run directory per trial tag, with the trial's settings.
    code, ls = runner("ls", str(root))
    runs = [r for r in ls["runs"] if f"sweep:{started['sweep_id']}" in r["meta"]["tags"]]
    tags = Counter(t for r in runs for t in r["meta"]["tags"] if t.startswith("trial:"))
    assert tags == Counter({f"trial:{n}": 1 for n in range(6)})
    for t in trials:
        run_dir = t["run_dir"]
        spec_json = json.loads(open(os.path.join(run_dir, "spec.json")).read())
        assert spec_json["train"]["lr"] == t["params"]["train.lr"]
        assert spec_json["model"]["freeze"] == t["params"]["model.freeze"]
        assert json.loads(open(os.path.join(run_dir, "sweep.json")).read())["trial"] == t["number"]
        status = json.loads(open(os.path.join(run_dir, "status.json")).read())
        assert status["state"] == ("stopped" if t["state"] == "PRUNED" else "completed")

    evs = events_of(sweep_dir)
    assert [e["resumed"] for e in evs if e["type"] == "sweep_started"] == [False, True]
    started_numbers = [e["number"] for e in evs if e["type"] == "trial_started"]
    assert sorted(started_numbers) == list(range(6))  # none started twice
    resumed = [e for e in evs if e["type"] == "trial_resumed"]
    assert {e["number"] for e in resumed} == {0, 1}  # the killed scheduler's trials were taken over
    assert "running" in {e["run_state"] for e in resumed}  # and a live one was followed again
    reported = Counter((e["number"], e["epoch"]) for e in evs if e["type"] == "trial_reported")
    assert max(reported.values()) == 1  # no epoch told to Optuna twice across the resume
    assert evs[-1]["type"] == "sweep_finished" and evs[-1]["status"] == "completed"
    assert {e["number"] for e in evs if e["type"] == "trial_pruned"} == {t["number"] for t in pruned}

    # The editor follows a sweep like a run (attach ends at sweep_finished) and lists it with sweep-ls.
    code, out = runner("attach", sweep_dir, check_json=False, timeout=30)
    assert code == 0 and [json.loads(ln)["seq"] for ln in out.splitlines()] == [e["seq"] for e in evs]
    code, listed = runner("sweep-ls", str(root))
    (only,) = listed["sweeps"]
    assert only["sweep_id"] == started["sweep_id"] and only["state"] == "completed"
    assert only["counts"]["counted"] == 6 and only["best"]["number"] == best["number"]


def test_sweep_stop_stops_the_running_trial_and_a_resume_runs_it_again_with_an_sqlite_study(demo, tmp_path):
    db = tmp_path / "study.db"
    spec = tmp_path / "s.ascend-sweep.json"
    spec.write_text(
        json.dumps(
            {
                "base": {
                    "name": "t",
                    "data": {"train": str(demo), "image_size": 32, "batch_size": 8, "workers": 1, "val_split": 0.25},
                    "model": {"backbone": "resnet18", "pretrained": None},
                    "train": {"epochs": 1},
                    "amp": {"level": "O0", "loss_scale": "none"},
                    "device": {"target": "CPU", "telemetry_s": 0},
                },
                "space": {"train.lr": {"low": 0.01, "high": 0.1, "log": True}},
                "trials": 1,
                "sampler": "random",
                "seed": 0,
                "storage": f"sqlite:///{db}",
            }
        )
    )
    code, started = runner("sweep", str(spec), "--root", str(tmp_path / "runs"), "--detach")
    assert code == 0, started
    sweep_dir = started["sweep_dir"]
    wait_for(lambda: any(e["type"] == "trial_started" for e in events_of(sweep_dir)), 120, "the trial to start")
    code, stopped = runner("sweep-stop", sweep_dir, "--timeout", "180")
    assert code == 0 and stopped == {"action": "stop", "state": "stopped", "handled": True}, stopped

    code, st = runner("sweep-status", sweep_dir)
    assert code == 0 and st["storage"] == f"sqlite:///{db}" and db.is_file()
    first, retry = st["trials"]
    assert (first["state"], first["outcome"]) == ("FAIL", "stopped")
    assert retry["state"] == "WAITING" and retry["retry_of"] == 0  # enqueued again, with the same parameters
    assert json.loads(open(os.path.join(first["run_dir"], "status.json")).read())["state"] == "stopped"
    code, again = runner("sweep-stop", sweep_dir)
    assert code == 2 and again["error"]["kind"] == "not_running"

    # A stop that reached control/ as the scheduler ended (sweep-stop takes one while the sweep reads as
    # running) was never read: the resume in the foreground used to read it and stop at once.
    request(sweep_dir, "stop")
    code, final = runner("sweep", sweep_dir, timeout=300)  # resume: the stopped trial runs again
    assert code == 0, final
    assert final["state"] == "completed" and final["counts"]["counted"] == 1
    redo = final["trials"][1]
    assert redo["state"] == "COMPLETE" and redo["retry_of"] == 0
    assert redo["params"] == first["params"]  # the same parameters, not a new draw
    assert final["best"]["number"] == 1
