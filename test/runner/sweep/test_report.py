"""sweep-status and sweep-ls before a scheduler has run, and the sweep folder's guards (no MindSpore
training here: the real sweeps are in test_sweep_real.py)."""

from __future__ import annotations

import json
import os
import time
from types import SimpleNamespace

import pytest
from conftest import runner

from ascend_finetune.rundir import LAUNCH_GRACE_S
from ascend_finetune.sweep import commands, folder
from ascend_finetune.sweep.commands import prepare


def _spec(tmp_path, data_a, **over):
    s = {
        "name": "s",
        "base": {"data": {"train": str(data_a), "image_size": 32}, "model": {"backbone": "resnet18"}},
        "space": {"train.lr": {"choices": [0.01, 0.1]}},
        "trials": 2,
        "sampler": "grid",
    }
    s.update(over)
    path = tmp_path / "s.ascend-sweep.json"
    path.write_text(json.dumps(s))
    return path


def test_a_sweep_folder_not_yet_started_reads_as_running_then_lost_with_no_trials(tmp_path, data_a):
    sweep_dir, existed = prepare(str(_spec(tmp_path, data_a)), str(tmp_path / "runs"), "my-sweep")
    assert not existed and sweep_dir == str(tmp_path / "runs" / "sweeps" / "my-sweep")
    code, st = runner("sweep-status", sweep_dir)
    assert code == 0, st
    # Only the states the editor knows (it leaves out a sweep in any other): running while its
    # scheduler may still be starting, lost once the launch grace has passed without one.
    assert st["state"] == "running" and st["pid"] is None
    made = json.loads((tmp_path / "runs" / "sweeps" / "my-sweep" / "sweep.json").read_text())["created_at"]
    assert st["started_at"] == made  # sorts among the newest, where it was just made
    assert st["trials"] == [] and st["best"] is None and st["importances"] is None
    assert st["objective"] == {"metric": "best_val_acc", "direction": "maximize"} and st["trials_target"] == 2
    code, ls = runner("sweep-ls", str(tmp_path / "runs"))
    assert [(s["sweep_id"], s["state"]) for s in ls["sweeps"]] == [("my-sweep", "running")]
    assert ls["sweeps"][0]["counts"] is None
    code, runs = runner("ls", str(tmp_path / "runs"))
    assert runs["runs"] == []  # the sweeps folder is not a run

    doc = json.loads((tmp_path / "runs" / "sweeps" / "my-sweep" / "sweep.json").read_text())
    doc["created_at"] -= LAUNCH_GRACE_S + 1
    (tmp_path / "runs" / "sweeps" / "my-sweep" / "sweep.json").write_text(json.dumps(doc))
    code, ls = runner("sweep-ls", str(tmp_path / "runs"))
    assert [(s["sweep_id"], s["state"]) for s in ls["sweeps"]] == [("my-sweep", "lost")]
    code, out = runner("sweep-stop", sweep_dir, "--timeout", "0")
    assert code == 2 and out["error"]["kind"] == "not_running" and out["error"]["params"]["state"] == "lost"


def test_a_detached_sweep_reads_as_running_before_its_scheduler_has_started(tmp_path, data_a, monkeypatch):
    # The editor lists the sweeps as soon as `sweep --detach` returns, while the scheduler's Python
    # still imports Optuna: the sweep must already be running, newest, with its start time (seen on
    # CI: it was left out of the list, its trials shown under a bare sweep id).
    sweep_dir, _ = prepare(str(_spec(tmp_path, data_a)), str(tmp_path / "runs"), "z")
    (tmp_path / "runs" / "sweeps" / "z" / "status.json").write_text(
        json.dumps({"state": "stopped", "pid": 1, "pid_start": 5, "ended_at": 1.0, "exit_code": 0})
    )  # an earlier scheduler's: this detach resumes it
    spawned = []
    before = time.time()
    with monkeypatch.context() as m:  # the scheduler is not started: this is the moment before it is
        m.setattr(commands.subprocess, "Popen", lambda argv, **kw: spawned.append(argv) or SimpleNamespace(pid=4242))
        assert commands.detach(sweep_dir) == 4242 and spawned and spawned[0][-3] == sweep_dir
    code, ls = runner("sweep-ls", str(tmp_path / "runs"))
    (got,) = ls["sweeps"]
    assert got["state"] == "running" and got["pid"] is None and got["started_at"] >= before, got
    assert got["ended_at"] is None
    status = json.loads((tmp_path / "runs" / "sweeps" / "z" / "status.json").read_text())
    assert status["pid_start"] is None and status["exit_code"] is None  # nothing of the earlier scheduler's
    # A scheduler that never writes its pid (its Python failed to start) reads as lost after the grace.
    status["started_at"] -= LAUNCH_GRACE_S + 1
    (tmp_path / "runs" / "sweeps" / "z" / "status.json").write_text(json.dumps(status))
    code, ls = runner("sweep-ls", str(tmp_path / "runs"))
    assert ls["sweeps"][0]["state"] == "lost"


def test_the_same_sweep_id_resumes_the_same_spec_and_refuses_another(tmp_path, data_a):
    spec = _spec(tmp_path, data_a)
    first, _ = prepare(str(spec), str(tmp_path / "runs"), "x")
    again, existed = prepare(str(spec), str(tmp_path / "runs"), "x")
    assert again == first and existed
    other = _spec(tmp_path, data_a, trials=1)
    code, out = runner("sweep", str(other), "--root", str(tmp_path / "runs"), "--sweep-id", "x", "--detach")
    assert code == 2 and out["error"]["kind"] == "busy" and "another spec" in out["error"]["message"]


def test_a_folder_that_is_not_a_sweep_is_refused(tmp_path):
    code, out = runner("sweep-status", str(tmp_path))
    assert code == 2 and out["error"]["kind"] == "not_a_sweep"
    code, out = runner("sweep", str(tmp_path))
    assert code == 2 and "not a sweep folder" in out["error"]["message"]


def test_a_second_scheduler_on_one_sweep_is_refused(tmp_path, data_a):
    sweep_dir, _ = prepare(str(_spec(tmp_path, data_a)), str(tmp_path / "runs"), "y")
    held = folder.lock(sweep_dir)  # as a running scheduler holds it
    try:
        code, out = runner("sweep", sweep_dir, "--detach")
        assert code == 2 and out["error"]["kind"] == "busy"
    finally:
        os.close(held)


def test_a_stop_left_for_a_scheduler_that_never_ran_does_not_end_the_next_one(tmp_path, data_a, monkeypatch):
    sweep_dir, _ = prepare(str(_spec(tmp_path, data_a)), str(tmp_path / "runs"), "s")
    code, out = runner("sweep-stop", sweep_dir, "--timeout", "0")  # within the grace: taken, for a scheduler
    assert code == 0 and out == {"action": "stop", "state": "running", "handled": False}, out
    control = tmp_path / "runs" / "sweeps" / "s" / "control"
    assert [n.split("-")[0] for n in os.listdir(control)] == ["stop"]
    (control / ".stop-being-written").write_text("stop")
    with monkeypatch.context() as m:
        m.setattr(commands.subprocess, "Popen", lambda argv, **kw: SimpleNamespace(pid=4242))
        commands.detach(sweep_dir)
    assert os.listdir(control) == [".stop-being-written"], "the old stop is gone; one being written stays"


def test_a_detach_that_cannot_start_the_scheduler_leaves_the_sweep_as_it_was(tmp_path, data_a, monkeypatch):
    sweep_dir, _ = prepare(str(_spec(tmp_path, data_a)), str(tmp_path / "runs"), "f")
    status = tmp_path / "runs" / "sweeps" / "f" / "status.json"
    ended = {"state": "completed", "pid": 1, "ended_at": 5.0, "exit_code": 0}
    status.write_text(json.dumps(ended))

    def no_fork(argv, **kw):
        raise BlockingIOError(11, "Resource temporarily unavailable")

    with monkeypatch.context() as m, pytest.raises(BlockingIOError):
        m.setattr(commands.subprocess, "Popen", no_fork)
        commands.detach(sweep_dir)
    assert json.loads(status.read_text()) == ended
    status.unlink()
    with monkeypatch.context() as m, pytest.raises(BlockingIOError):
        m.setattr(commands.subprocess, "Popen", no_fork)
        commands.detach(sweep_dir)
    assert not status.exists()
    # A console.log that cannot be used fails before anything changed.
    status.write_text(json.dumps(ended))
    (tmp_path / "runs" / "sweeps" / "f" / "console.log").unlink(missing_ok=True)
    os.symlink(tmp_path / "elsewhere.log", tmp_path / "runs" / "sweeps" / "f" / "console.log")
    with pytest.raises(OSError):
        commands.detach(sweep_dir)
    assert json.loads(status.read_text()) == ended and not (tmp_path / "elsewhere.log").exists()


def test_a_detach_while_another_detachs_scheduler_starts_is_busy_and_keeps_its_stop(tmp_path, data_a, monkeypatch):
    # The first detach's scheduler has not taken the sweep yet (Optuna still importing) and the user has
    # stopped it: a second detach used to drop that stop and start a scheduler of its own.
    sweep_dir, _ = prepare(str(_spec(tmp_path, data_a)), str(tmp_path / "runs"), "r")
    with monkeypatch.context() as m:
        m.setattr(commands.subprocess, "Popen", lambda argv, **kw: SimpleNamespace(pid=4242))
        commands.detach(sweep_dir)
    code, out = runner("sweep-stop", sweep_dir, "--timeout", "0")
    assert code == 0 and out["state"] == "running", out
    with monkeypatch.context() as m, pytest.raises(commands.BadInput) as e:
        m.setattr(commands.subprocess, "Popen", lambda argv, **kw: SimpleNamespace(pid=4243))
        commands.detach(sweep_dir)
    assert e.value.kind == "busy" and "starting" in str(e.value)
    assert [n.split("-")[0] for n in os.listdir(tmp_path / "runs" / "sweeps" / "r" / "control")] == ["stop"]


def test_a_detach_never_writes_over_a_scheduler_that_holds_the_sweep(tmp_path, data_a):
    # A regression guard (the old code checked the lock, then wrote: refused here too).
    sweep_dir, _ = prepare(str(_spec(tmp_path, data_a)), str(tmp_path / "runs"), "h")
    status = tmp_path / "runs" / "sweeps" / "h" / "status.json"
    mine = {"state": "running", "pid": os.getpid(), "pid_start": 7, "host": "here"}
    status.write_text(json.dumps(mine))
    held = folder.lock(sweep_dir)  # the running scheduler's
    try:
        code, out = runner("sweep", sweep_dir, "--detach")
        assert code == 2 and out["error"]["kind"] == "busy"
    finally:
        os.close(held)
    assert json.loads(status.read_text()) == mine


def test_a_stop_sent_while_a_foreground_sweep_starts_is_kept_for_its_scheduler(tmp_path, data_a):
    # `sweep SPEC` in the foreground: the folder exists, its scheduler not yet (no status.json), and
    # sweep-stop takes a stop for it. The scheduler must act on that stop, not drop it as a stale one.
    sweep_dir, _ = prepare(str(_spec(tmp_path, data_a)), str(tmp_path / "runs"), "k")
    code, out = runner("sweep-stop", sweep_dir, "--timeout", "0")
    assert code == 0 and out["state"] == "running", out
    from ascend_finetune.sweep.scheduler import Scheduler

    assert Scheduler(sweep_dir, new=True).run() == "stopped"
    code, st = runner("sweep-status", sweep_dir)
    assert st["state"] == "stopped" and st["trials"] == [], st


def test_a_stop_sent_to_a_detached_sweep_is_kept_however_slowly_its_scheduler_starts(tmp_path, data_a, monkeypatch):
    # The stop is taken within the launch grace; the scheduler reaches the lock after it (Optuna's
    # import and npu-smi on a loaded box). It used to judge the wait by the clock, and drop the stop.
    sweep_dir, _ = prepare(str(_spec(tmp_path, data_a)), str(tmp_path / "runs"), "d")
    spawned = []
    with monkeypatch.context() as m:
        m.setattr(commands.subprocess, "Popen", lambda argv, **kw: spawned.append(argv) or SimpleNamespace(pid=4242))
        commands.detach(sweep_dir)
    code, out = runner("sweep-stop", sweep_dir, "--timeout", "0")
    assert code == 0 and out["state"] == "running", out
    status = tmp_path / "runs" / "sweeps" / "d" / "status.json"
    late = json.loads(status.read_text())
    late["started_at"] -= LAUNCH_GRACE_S + 1
    status.write_text(json.dumps(late))
    argv = spawned[0]
    assert argv[-2] == "--launch-id"
    from ascend_finetune.sweep.scheduler import Scheduler

    assert Scheduler(sweep_dir, argv[-1]).run() == "stopped"
    assert json.loads(status.read_text())["launch_id"] is None
