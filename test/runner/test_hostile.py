"""Run directories that other users can write to (issue 14): planted symlinks, special files,
valid JSON of the wrong type, and a full disk. Every reader must give a clear answer in bounded
time and memory, and no writer may write through a file it did not make."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
from conftest import ROOT, spec, write_spec
from hostile_root import build

TIMEOUT = 60  # a hang fails the test instead of the suite


def cli(*args: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"))
    return subprocess.run(
        [sys.executable, "-m", "ascend_finetune", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def last_json(r: subprocess.CompletedProcess) -> dict:
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    assert lines, f"no output (stderr {r.stderr[-2000:]!r})"
    return json.loads(lines[-1])


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile") / "runs"
    summary = build(str(root))  # the running run names this (pytest's) process: alive throughout
    yield summary
    shutil.rmtree(root, ignore_errors=True)  # its 64 MiB line


# -- item 5: the hostile runs root -----------------------------------------------------------------


def test_ls_lists_every_good_run_and_each_bad_run_with_its_problem(hostile):
    r = cli("ls", hostile["root"])
    assert r.returncode == 0, r.stderr[-3000:]
    runs = {e["run_id"]: e for e in last_json(r)["runs"]}
    assert set(runs) == set(hostile["good"]) | {b["run_id"] for b in hostile["bad"]}
    done, live = runs["good-completed"], runs["good-running"]
    assert done["state"] == "completed" and done["problem"] is None
    assert (done["name"], done["backbone"], done["epochs"], done["step"]) == (
        "done",
        "resnet18",
        2,
        5,
    )
    assert done["best"]["file"] == "checkpoints/done-e1-s5.ckpt"
    assert live["state"] == "running" and live["pid"] == hostile["live_pid"] and live["problem"] is None
    assert live["step"] == 3 and live["name"] == "live"
    assert runs["events-junk"]["step"] == 4 and runs["events-junk"]["problem"] is None
    for bad in hostile["bad"]:
        entry = runs[bad["run_id"]]
        assert entry["problem"] and bad["problem"] in entry["problem"], (bad, entry)
        assert entry["state"] in ("completed", "lost", "running"), entry
    # a wrong-typed pid names no process: never `running`
    assert {runs[k]["state"] for k in ("pid-str", "pid-float", "pid-bigint")} == {"lost"}
    assert runs["spec-model-int"]["name"] == "m" and runs["spec-model-int"]["backbone"] is None


def test_attach_streams_every_good_run_and_ends_each_bad_one_with_an_error(hostile):
    root = Path(hostile["root"])
    for run_id, n in hostile["lines"].items():
        r = cli("attach", str(root / run_id), "--no-follow")
        assert r.returncode == 0, (run_id, r.stdout[-2000:], r.stderr[-2000:])
        evs = [json.loads(ln) for ln in r.stdout.splitlines()]
        assert [e["seq"] for e in evs] == list(range(1, n + 1)), run_id
    r = cli("attach", str(root / "events-junk"), "--no-follow")
    warnings = [json.loads(ln)["warning"] for ln in r.stderr.splitlines() if ln.startswith('{"warning"')]
    assert len(warnings) == hostile["junk_lines_in_events_junk"], r.stderr[-3000:]
    assert all(w["kind"] == "bad_line" and "events.jsonl line" in w["message"] for w in warnings)
    assert any("longer than" in w["message"] for w in warnings)
    for bad in hostile["bad"]:
        r = cli("attach", str(root / bad["run_id"]), "--no-follow")
        lines = [json.loads(ln) for ln in r.stdout.splitlines()]
        if bad["attach_error"]:
            assert r.returncode == 1 and lines[-1]["error"]["kind"] == "bad_run", (
                bad,
                r.stdout,
                r.stderr[-2000:],
            )
            assert bad["problem"].split(":")[0] in lines[-1]["error"]["message"]
        else:  # a bad spec or manifest does not keep its events from being read
            assert r.returncode == 0 and all("seq" in e for e in lines), (
                bad,
                r.stdout,
                r.stderr[-2000:],
            )


def test_the_builder_cli_prints_its_summary():
    # Not under tmp_path: the teardown there stops the `running` runs it finds, and this one names
    # the caller (this pytest process) as its live training process.
    d = tempfile.mkdtemp(prefix="hostile-cli-")
    try:
        r = subprocess.run(
            [sys.executable, str(ROOT / "test/runner/hostile_root.py"), os.path.join(d, "r")],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert r.returncode == 0, r.stderr
        summary = json.loads(r.stdout)
        assert summary["good"][:2] == ["good-completed", "good-running"] and len(summary["bad"]) >= 10
        assert summary["live_pid"] == os.getpid()  # the caller stays alive: the running run is running
        ls = json.loads(cli("ls", summary["root"]).stdout)
        assert {e["run_id"]: e["state"] for e in ls["runs"]}["good-running"] == "running"
    finally:
        shutil.rmtree(d, ignore_errors=True)


# -- item 1: planted symlinks --------------------------------------------------------------------


def _manifest_run(run: Path) -> None:
    (run / "checkpoints").mkdir(parents=True)
    entries = []
    for i, acc in ((1, 0.5), (2, 0.75)):
        (run / f"checkpoints/m-e{i}-s{i}.ckpt").write_bytes(b"x")
        entries.append(
            {
                "file": f"checkpoints/m-e{i}-s{i}.ckpt",
                "step": i,
                "metrics": {"val_acc": acc},
            }
        )
    entries[1]["best"] = True
    (run / "checkpoints.json").write_text(json.dumps(entries))
    (run / "status.json").write_text(json.dumps({"state": "completed"}))


def test_atomic_writes_never_write_through_a_planted_temp_symlink(tmp_path):
    from ascend_finetune.rundir import atomic_write_json, write_status

    run, outside = tmp_path / "run", tmp_path / "victim.txt"
    run.mkdir()
    outside.write_text("precious")
    for name in (
        "status.json",
        "checkpoints.json",
    ):  # the old temp name: NAME.tmp-<pid>
        os.symlink(outside, run / f"{name}.tmp-{os.getpid()}")
    write_status(str(run), state="running")
    atomic_write_json(str(run / "checkpoints.json"), [])
    assert outside.read_text() == "precious"
    assert not (run / "checkpoints.json").is_symlink() and json.loads((run / "checkpoints.json").read_text()) == []
    assert json.loads((run / "status.json").read_text()) == {"state": "running"}


def test_delete_checkpoints_with_symlinks_planted_for_the_pid_range_writes_nothing_outside(
    tmp_path,
):
    run, outside = tmp_path / "run", tmp_path / "victim.txt"
    _manifest_run(run)
    outside.write_text("precious")
    last = int(Path("/proc/sys/kernel/ns_last_pid").read_text())
    for pid in range(last, last + 400):  # the next processes: the CLI's among them
        os.symlink(outside, run / f"checkpoints.json.tmp-{pid}")
    r = cli("delete-checkpoints", "--run", str(run), "checkpoints/m-e1-s1.ckpt")
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    assert outside.read_text() == "precious"
    assert not (run / "checkpoints.json").is_symlink()
    assert [e["file"] for e in json.loads((run / "checkpoints.json").read_text())] == ["checkpoints/m-e2-s2.ckpt"]


def test_lock_files_that_are_symlinks_are_refused_and_their_targets_untouched(tmp_path, data_a):
    run, outside = tmp_path / "run", tmp_path / "elsewhere"
    _manifest_run(run)
    os.symlink(outside / "created-by-the-runner", run / ".checkpoints.lock")
    outside.mkdir()
    r = cli("delete-checkpoints", "--run", str(run), "checkpoints/m-e1-s1.ckpt")
    assert r.returncode == 2 and last_json(r)["error"]["kind"] == "unsafe_file", r.stdout + r.stderr[-2000:]
    assert ".checkpoints.lock is a symlink" in last_json(r)["error"]["message"]
    assert not os.listdir(outside) and (run / "checkpoints/m-e1-s1.ckpt").exists()

    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    run2 = tmp_path / "run2"
    run2.mkdir()
    os.symlink(victim, run2 / ".lock")
    s = write_spec(tmp_path / "s.json", spec(data_a, name="sym"))
    r = cli("train", str(s), "--run-dir", str(run2))
    assert r.returncode == 2, r.stdout + r.stderr[-2000:]
    assert last_json(r)["error"] == {
        "kind": "unsafe_file",
        "code": "unsafe_file",
        "params": {"path": str(run2 / ".lock"), "cause": "symlink", "file": ".lock"},
        "message": f".lock is a symlink: refusing to follow it: {run2 / '.lock'}",
        "path": str(run2 / ".lock"),
    }
    assert victim.read_text() == "precious"  # `open(".lock", "w")` used to truncate it


def test_event_log_and_control_folder_that_are_symlinks_are_refused(tmp_path):
    from ascend_finetune.control import ControlInbox
    from ascend_finetune.events import EventLog
    from ascend_finetune.rundir import UnsafeFile

    run, victim = tmp_path / "run", tmp_path / "victim"
    run.mkdir()
    victim.mkdir()
    (victim / "thesis.tex").write_text("precious")
    os.symlink(victim / "thesis.tex", run / "events.jsonl")
    with pytest.raises(UnsafeFile, match="events.jsonl is a symlink"):
        EventLog(str(run / "events.jsonl"))
    os.symlink(victim, run / "control")
    with pytest.raises(UnsafeFile, match="control is not a folder"):
        ControlInbox(str(run)).clear()  # clear() deletes every request file it finds there
    assert (victim / "thesis.tex").read_text() == "precious"


# -- items 2 and 3: special files and wrong types in the tools -------------------------------------


def test_delete_checkpoints_with_a_fifo_lock_is_a_clear_error_not_a_hang(tmp_path):
    run = tmp_path / "run"
    _manifest_run(run)
    os.mkfifo(run / ".lock")
    r = cli("delete-checkpoints", "--run", str(run), "checkpoints/m-e1-s1.ckpt", timeout=30)
    assert r.returncode == 2 and last_json(r)["error"]["kind"] == "unsafe_file", r.stdout + r.stderr[-2000:]
    assert ".lock is not a regular file" in last_json(r)["error"]["message"]
    assert (run / "checkpoints/m-e1-s1.ckpt").exists()  # nothing lost


def test_delete_the_best_when_another_entry_has_metrics_of_the_wrong_type(tmp_path):
    run = tmp_path / "run"
    _manifest_run(run)
    entries = json.loads((run / "checkpoints.json").read_text())
    entries[0]["metrics"] = "val_acc=0.5"
    (run / "checkpoints.json").write_text(json.dumps(entries))
    r = cli(
        "delete-checkpoints",
        "--run",
        str(run),
        "--allow-best",
        "checkpoints/m-e2-s2.ckpt",
    )
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    assert last_json(r)["kept"] == ["checkpoints/m-e1-s1.ckpt"]
    kept = json.loads((run / "checkpoints.json").read_text())
    assert kept[0]["metrics"] == "val_acc=0.5" and kept[0]["best"] is False  # kept as it was, never best


# -- item 4: a full disk ---------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    d = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    d.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(d)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {r.stderr.strip()}")
    yield d
    subprocess.run(["umount", "-l", str(d)], check=False)


def test_a_full_disk_ends_the_run_failed_with_the_reason_and_no_partial_files(small_disk, data_a, tmp_path):
    run = small_disk / "run"
    # resnet18 with its momentum is about 90 MB: the first checkpoint cannot fit into 24 MB
    s = write_spec(tmp_path / "s.json", spec(data_a, name="full", train={"epochs": 1}))
    r = cli("train", str(s), "--run-dir", str(run), timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr[-3000:]
    assert last_json(r)["error"]["kind"] == "disk_full"
    status = json.loads((run / "status.json").read_text())
    assert status["state"] == "failed" and status["exit_code"] == 1, status
    assert status["error"]["kind"] == "disk_full" and "is full" in status["error"]["message"], status
    finished = json.loads((run / "events.jsonl").read_bytes().splitlines()[-1])
    assert finished["type"] == "run_finished" and finished["error"]["kind"] == "disk_full"
    leftovers = [p.name for p in run.rglob("*") if ".tmp-" in p.name or p.name == ".reserve"]
    assert leftovers == [] and list((run / "checkpoints").iterdir()) == []
    r = cli("ls", str(small_disk))
    assert [e["state"] for e in last_json(r)["runs"]] == ["failed"]


def test_hashing_a_fifo_planted_under_a_checkpoint_name_is_refused_not_a_hang(tmp_path):
    # verify and inspect check the file first; this is the hash itself, for a file swapped in after
    # that check: it must answer at once, not wait for a writer that never comes.
    from ascend_finetune.checkpoints.manifest import sha256_file
    from ascend_finetune.rundir import UnsafeFile

    fifo = tmp_path / "m-e1-s1.ckpt"
    os.mkfifo(fifo)
    with pytest.raises(UnsafeFile, match="not a regular file"):
        sha256_file(str(fifo))
    real = tmp_path / "real.ckpt"
    real.write_bytes(b"abc")
    assert sha256_file(str(real)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_a_folder_where_the_runner_writes_a_file_is_unsafe_file_not_a_traceback(tmp_path, data_a):
    """A folder planted under status.json ends `train` at once; one under a checkpoint's name ends
    the run when it saves there: both with unsafe_file (exit 2), the folder and its content kept."""
    s = write_spec(tmp_path / "s.json", spec(data_a, name="dir", train={"epochs": 1}))
    run = tmp_path / "run"
    (run / "status.json").mkdir(parents=True)
    (run / "status.json" / "theirs.txt").write_text("precious")
    r = cli("train", str(s), "--run-dir", str(run))
    assert r.returncode == 2, r.stdout + r.stderr[-2000:]
    err = last_json(r)["error"]
    assert (err["kind"], err["params"]["file"]) == ("unsafe_file", "status.json"), err
    assert err["message"] == f"status.json is not a regular file: {run / 'status.json'}"
    assert (run / "status.json" / "theirs.txt").read_text() == "precious"

    run2 = tmp_path / "run2"
    (run2 / "checkpoints").mkdir(parents=True)
    for step in range(1, 200):  # the first checkpoint's name, whatever the epoch's step count
        (run2 / "checkpoints" / f"dir-e1-s{step}.ckpt").mkdir()
    r = cli("train", str(s), "--run-dir", str(run2), timeout=300)
    assert r.returncode == 2, r.stdout + r.stderr[-2000:]
    status = json.loads((run2 / "status.json").read_text())
    assert status["state"] == "failed" and status["error"]["code"] == "unsafe_file", status
    assert status["error"]["params"]["file"].startswith("checkpoints/dir-e1-s"), status
    assert all(p.is_dir() for p in (run2 / "checkpoints").glob("dir-e1-s*.ckpt"))
    assert not [p for p in (run2 / "checkpoints").iterdir() if p.name.startswith(".")], "no temporary left"
