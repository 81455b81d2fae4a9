"""attach: replay with --since, follow a growing log to run_finished, tolerate torn lines and a run
directory that does not exist yet. The writer here is the runner's own EventLog, driven by a thread."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

from conftest import ROOT, wait_for

from ascend_finetune.events import EventLog
from ascend_finetune.rundir import initial_status


def _attach(run_dir, since=0, *extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"))
    return subprocess.Popen(
        [sys.executable, "-m", "ascend_finetune", "attach", str(run_dir), "--since", str(since), *extra],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )


def _writer(run_dir, n_steps, torn_at=(), started=None):
    """Writes run_started, n steps and run_finished; at some steps a line is written in two halves."""
    os.makedirs(run_dir, exist_ok=True)
    initial_status(str(run_dir), os.getpid())
    log = EventLog(os.path.join(run_dir, "events.jsonl"))
    log.emit("run_started", run_id="x", total_steps=n_steps)
    if started:
        started.set()
    for i in range(1, n_steps + 1):
        if i in torn_at:  # a line caught half-written by the reader
            line = json.dumps({"v": 1, "seq": log.seq + 1, "t": time.time(), "type": "step", "step": i, "loss": 1.0})
            log._f.write(line[:20])
            log._f.flush()
            time.sleep(0.15)
            log._f.write(line[20:] + "\n")
            log._f.flush()
            log.seq += 1
        else:
            log.emit("step", step=i, loss=1.0 / i)
        time.sleep(0.005)
    log.emit("run_finished", status="completed", error=None, best=None, final=None)
    log.close()


def _read(proc):
    out, _ = proc.communicate(timeout=60)
    return proc.returncode, [json.loads(ln) for ln in out.splitlines() if ln.strip()]


def test_follow_from_before_the_run_dir_exists_to_the_end(tmp_path):
    run_dir = tmp_path / "not-yet"
    proc = _attach(run_dir)  # the directory is still being created
    time.sleep(0.2)  # let attach start polling a missing directory (this is the case under test)
    t = threading.Thread(target=_writer, args=(run_dir, 200, {5, 50, 150}))
    t.start()
    code, evs = _read(proc)
    t.join()
    assert code == 0
    assert [e["seq"] for e in evs] == list(range(1, 203)), "every event once, in order, torn lines included"
    assert evs[-1]["type"] == "run_finished"


def test_replay_since_and_concurrent_attaches_agree(tmp_path):
    run_dir = tmp_path / "run"
    started = threading.Event()
    t = threading.Thread(target=_writer, args=(run_dir, 300), kwargs={"started": started})
    t.start()
    started.wait(10)
    first = _attach(run_dir, 0)
    wait_for(lambda: sum(1 for _ in open(run_dir / "events.jsonl")) > 100, what="100 events")
    second = _attach(run_dir, 100)  # a reconnect: --since the last seq it had
    c1, a = _read(first)
    c2, b = _read(second)
    t.join()
    assert c1 == c2 == 0
    assert [e["seq"] for e in a] == list(range(1, 303))
    assert [e["seq"] for e in b] == list(range(101, 303))
    assert a[100:] == b, "the reconnected stream is exactly the rest: no gap, no duplicate"
    # a finished run replays and exits at once, with or without follow
    for extra in ((), ("--no-follow",)):
        code, c = _read(_attach(run_dir, 250, *extra))
        assert code == 0 and [e["seq"] for e in c] == list(range(251, 303))


def test_no_follow_prints_what_exists_and_exits(tmp_path):
    run_dir = tmp_path / "run"
    os.makedirs(run_dir)
    initial_status(str(run_dir), os.getpid())
    log = EventLog(os.path.join(run_dir, "events.jsonl"))
    for i in range(5):
        log.emit("step", step=i + 1, loss=0.5)
    log._f.write('{"v": 1, "seq": 6, "ty')  # torn: not printed
    log._f.flush()
    code, evs = _read(_attach(run_dir, 2, "--no-follow"))
    assert code == 0 and [e["seq"] for e in evs] == [3, 4, 5]


def test_event_log_continues_seq_after_a_torn_line(tmp_path):
    path = tmp_path / "events.jsonl"
    log = EventLog(str(path))
    log.emit("step", step=1, loss=float("nan"))
    log._f.write('{"v": 1, "seq": 2, "type": "st')
    log._f.flush()
    log2 = EventLog(str(path))  # a resumed run opens the same log
    ev = log2.emit("step", step=2, loss=0.25)
    log2.close()
    lines = path.read_text().splitlines()
    assert [json.loads(ln)["seq"] for ln in lines] == [1, 2] and ev["seq"] == 2
    assert json.loads(lines[0])["loss"] is None, "NaN is written as null: the file stays valid JSON"


def test_a_resumed_log_is_followed_past_its_first_run_finished(tmp_path):
    run_dir = tmp_path / "run"
    os.makedirs(run_dir)
    initial_status(str(run_dir), os.getpid())
    log = EventLog(os.path.join(run_dir, "events.jsonl"))
    log.emit("run_started", run_id="x")
    log.emit("step", step=1, loss=1.0)
    log.emit("run_finished", status="stopped", error=None, best=None, final=None)
    log.emit("run_started", run_id="x", resumed_from={"file": "c", "step": 1})  # the resume
    proc = _attach(run_dir, 0)
    log.emit("step", step=2, loss=0.5)
    log.emit("run_finished", status="completed", error=None, best=None, final=None)
    log.close()
    code, evs = _read(proc)
    assert code == 0 and [e["seq"] for e in evs] == list(range(1, 7))
    # --since at or past the end of a finished run returns at once with nothing
    code, evs = _read(_attach(run_dir, 6))
    assert code == 0 and evs == []


def test_a_run_directory_deleted_while_followed_ends_attach_with_an_error(tmp_path):
    import shutil

    run_dir = tmp_path / "doomed"
    run_dir.mkdir()
    initial_status(str(run_dir), os.getpid())  # this test process: alive, so never `lost`
    log = EventLog(os.path.join(run_dir, "events.jsonl"))
    log.emit("run_started", run_id="x", total_steps=10)
    log.close()
    proc = _attach(run_dir)
    # Delete only once attach is following (it has printed run_started): deleted earlier, the folder is
    # one that does not exist yet, which attach rightly waits for (a launch still creating it).
    first = json.loads(proc.stdout.readline())
    shutil.rmtree(run_dir)
    code, evs = _read(proc)  # without the check this never returns (the test times out)
    assert code == 1
    assert first["type"] == "run_started" and evs[-1]["error"]["kind"] == "gone"
