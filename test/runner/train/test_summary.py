"""summary.json: kept up to date by a real run, listed by `ls` with the flattened spec, carried across a
resume, and never trusted blindly (old runs without one, planted files)."""

from __future__ import annotations

import json
import os
import statistics

from conftest import events, of_type, runner, spec, wait_for, write_spec


def _summary(run_dir):
    path = os.path.join(run_dir, "summary.json")
    try:
        with open(path) as f:
            return json.load(f)
    except (FileNotFoundError, ValueError):  # not yet, or caught between two writes of the test's own reads
        return None


def _listed(root, run_dir):
    code, out = runner("ls", str(root))
    assert code == 0, out
    return next(r for r in out["runs"] if r["run_dir"] == os.path.abspath(run_dir))


def test_a_real_run_keeps_its_summary_current_and_ls_lists_it_with_the_spec_fields(data_a, tmp_path):
    s = spec(data_a, name="summary", train={"epochs": 40, "lr": 0.02}, model={"freeze": "none"})
    root = tmp_path / "runs"
    code, launched = runner("launch", str(write_spec(tmp_path / "s.json", s)), "--runs-root", str(root))
    assert code == 0, launched
    run_dir = launched["run_dir"]

    # While it runs: the summary is there after the first epoch, and `ls` carries it.
    during = wait_for(lambda: (_summary(run_dir) or {}).get("epochs_done"), what="a summary after epoch 1")
    assert during >= 1
    listed = _listed(root, run_dir)
    assert listed["summary"]["epochs_done"] >= 1
    assert listed["summary"]["state"] == "running"
    assert 0 <= listed["summary"]["best_val_acc"] <= 1
    assert listed["summary"]["img_per_s"] > 0
    assert "tracking" not in listed["summary"], "ls lists the summary's fields, not its bookkeeping"
    assert listed["spec_fields"]["train.lr"] == 0.02
    assert listed["spec_fields"]["model.freeze"] == "none"
    assert listed["spec_fields"]["data.image_size"] == 32
    assert listed["spec_fields"]["device.ids"] == "[0]", "a list is one value, its compact JSON"

    code, out = runner("control", run_dir, "stop")
    assert code == 0, out
    wait_for(lambda: (_summary(run_dir) or {}).get("state") == "stopped", what="the summary of the stopped run")

    # At the end: every figure agrees with the event log it was made from.
    evs = events(run_dir)
    evals, steps = of_type(evs, "eval"), of_type(evs, "step")
    summary = _listed(root, run_dir)["summary"]
    assert summary["state"] == "stopped"
    assert summary["epochs_done"] == of_type(evs, "epoch_end")[-1]["epoch"] >= 1
    assert summary["steps_done"] == steps[-1]["step"]
    assert summary["total_steps"] == of_type(evs, "run_started")[0]["total_steps"]
    assert summary["best_val_acc"] == max(e["val_acc"] for e in evals)
    assert summary["final_val_acc"] == evals[-1]["val_acc"]
    assert summary["best_val_loss"] == min(e["val_loss"] for e in evals)
    assert summary["skipped_updates"] == sum(1 for e in steps if e["skipped"])
    rates = [e["img_per_s"] for e in steps if e["img_per_s"]][-20:]
    assert summary["img_per_s"] == round(statistics.median(rates), 2)
    assert summary["started_at"] == of_type(evs, "run_started")[0]["t"]
    assert summary["ended_at"] == evs[-1]["t"]
    assert abs(summary["duration_s"] - (evs[-1]["t"] - of_type(evs, "run_started")[0]["t"])) < 1e-3


def _log(path, evs, torn=""):
    with open(path, "w") as f:
        for i, e in enumerate(evs, 1):
            f.write(json.dumps({"v": 1, "seq": i, **e}) + "\n")
        f.write(torn)


def _ev(t, type_, **kw):
    return {"t": t, "type": type_, **kw}


def test_a_resumed_run_carries_its_summary_on_without_counting_twice(tmp_path):
    from ascend_finetune.train.summary import RunSummary

    run = tmp_path / "r"
    run.mkdir()
    log = run / "events.jsonl"
    first = [
        _ev(100, "run_started", total_steps=8),
        _ev(101, "step", step=1, skipped=True, img_per_s=10.0),
        _ev(102, "step", step=2, skipped=False, img_per_s=30.0),
        _ev(103, "eval", epoch=1, val_acc=0.5, val_loss=1.2),
        _ev(103.5, "epoch_end", epoch=1),
    ]
    # a torn last line (a kill mid-write) is not taken until it is complete
    _log(log, first, torn='{"v": 1, "seq": 6, "t": 104, "type": "step", "step": 3, "skipp')
    s1 = RunSummary(str(run)).update()
    assert s1 is not None
    assert (s1["epochs_done"], s1["skipped_updates"], s1["best_val_acc"], s1["img_per_s"]) == (1, 1, 0.5, 20.0)
    assert s1["duration_s"] == 3.5

    # The process dies; a resume (a new process, a new RunSummary) appends to the same log.
    second = [
        _ev(200, "run_started", total_steps=8, resumed_from={"step": 2}),
        _ev(201, "step", step=3, first_step=3, skipped_updates=2, overflows=2, img_per_s=50.0),
        _ev(202, "eval", epoch=2, val_acc=0.4, val_loss=0.9),
        _ev(202.5, "epoch_end", epoch=2),
        _ev(203, "run_finished", status="completed"),
    ]
    _log(log, first + second)  # the resume cut the torn line (EventLog does) and went on
    s2 = RunSummary(str(run)).update("completed")
    assert s2 is not None
    assert s2["epochs_done"] == 2
    assert s2["skipped_updates"] == 3, "1 before the resume, a sink's 2 after; none counted twice"
    assert (s2["best_val_acc"], s2["best_val_acc_epoch"], s2["final_val_acc"]) == (0.5, 1, 0.4)
    assert s2["best_val_loss"] == 0.9
    assert s2["img_per_s"] == 30.0  # median of 10, 30, 50
    assert s2["started_at"] == 100 and s2["ended_at"] == 203
    assert s2["duration_s"] == 3.5 + 3.0, "active time of both processes, not the gap between them"
    assert s2["state"] == "completed"


def test_a_log_that_was_replaced_is_read_again_from_its_start(tmp_path):
    from ascend_finetune.train.summary import RunSummary

    run = tmp_path / "r"
    run.mkdir()
    _log(run / "events.jsonl", [_ev(1, "run_started"), *[_ev(2, "step", step=i, skipped=True) for i in range(50)]])
    assert RunSummary(str(run)).update()["skipped_updates"] == 50
    _log(run / "events.jsonl", [_ev(1, "run_started"), _ev(2, "step", step=1, skipped=True)])  # shorter
    assert RunSummary(str(run)).update()["skipped_updates"] == 1


def test_ls_lists_old_runs_without_a_summary_and_ignores_a_planted_or_bad_one(tmp_path):
    from ascend_finetune.runlist import list_runs

    root = tmp_path / "runs"
    for name in ("old", "planted", "bad"):
        d = root / name
        d.mkdir(parents=True)
        (d / "status.json").write_text(json.dumps({"run_id": name, "state": "completed", "started_at": 1}))
        (d / "spec.json").write_text(json.dumps({"name": name, "train": {"lr": 0.1, "epochs": 2}}))
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"best_val_acc": 0.99}))
    os.symlink(secret, root / "planted" / "summary.json")
    (root / "bad" / "summary.json").write_text(json.dumps({"best_val_acc": "high", "epochs_done": 3, "state": 7}))
    runs = {r["run_id"]: r for r in list_runs(str(root))}
    assert runs["old"]["summary"] is None
    assert runs["old"]["spec_fields"] == {"name": "old", "train.lr": 0.1, "train.epochs": 2}
    assert runs["planted"]["summary"] is None, "a summary.json symlink is not followed"
    bad = runs["bad"]["summary"]
    assert bad["best_val_acc"] is None and bad["state"] is None and bad["epochs_done"] == 3


def test_flattened_spec_is_bounded(tmp_path):
    from ascend_finetune.runlist import FLAT_MAX_KEYS, FLAT_MAX_TEXT, flatten_spec

    flat = flatten_spec({"data": {"train": "x" * 5000}, "wide": {f"k{i}": i for i in range(1000)}})
    assert len(flat) == FLAT_MAX_KEYS
    assert len(flat["data.train"]) == FLAT_MAX_TEXT and flat["data.train"].endswith("\u2026")
    assert flatten_spec({"a": [1, {"b": 2}], "n": float("nan")}) == {"a": '[1,{"b":2}]', "n": None}
