"""Run directories: `ls` over junk, and `lost` when a pid now belongs to another process."""

from __future__ import annotations

import json
import os

from conftest import runner


def test_ls_passes_over_junk_and_reads_runs_from_their_tail(tmp_path):
    from ascend_finetune.events import EventLog
    from ascend_finetune.rundir import initial_status
    from ascend_finetune.runlist import list_runs

    root = tmp_path / "runs"
    run = root / "r1"
    run.mkdir(parents=True)
    (root / "README.txt").write_text("not a run")
    (root / "empty-dir").mkdir()
    initial_status(str(run), None)
    log = EventLog(str(run / "events.jsonl"))
    for i in range(1, 2001):
        log.emit("step", epoch=1, step=i, loss=1.0 / i)
    log.close()
    with open(run / "events.jsonl", "ab") as f:
        f.write(b"\x00\x00\x00\n")  # what a power loss can leave
    (run / "checkpoints.json").write_text(
        json.dumps([{"file": "checkpoints/a.ckpt", "epoch": 1, "step": 5, "metrics": {"val_acc": 0.5}, "best": True}])
    )
    runs = list_runs(str(root))
    assert [r["run_id"] for r in runs] == ["r1"]
    assert runs[0]["step"] == 2000 and runs[0]["state"] == "running"  # launched, within the start-up grace
    assert runs[0]["best"]["file"] == "checkpoints/a.ckpt" and runs[0]["best"]["metrics"]["val_acc"] == 0.5
    code, out = runner("ls", str(root))
    assert code == 0 and len(out["runs"]) == 1


def test_lost_when_the_pid_belongs_to_another_process(tmp_path):
    from ascend_finetune.rundir import effective_state, process_start, write_status

    run = str(tmp_path / "run")
    os.makedirs(run)
    write_status(run, state="running", pid=os.getpid(), pid_start=process_start(os.getpid()), started_at=0)
    assert effective_state(run) == "running"
    write_status(run, pid_start=process_start(os.getpid()) - 1)  # same pid, another process's start
    assert effective_state(run) == "lost"
    write_status(run, pid=None, started_at=0)  # a launch that never started its process
    assert effective_state(run) == "lost"
