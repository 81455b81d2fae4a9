"""The private folders of pinned weights (models/pinned.py) left by a run killed before it cleaned up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest
from conftest import ROOT

import ascend_finetune.models.pinned as pinned
from ascend_finetune.models.pinned import PinnedFile
from ascend_finetune.rundir import pid_alive

AGED = time.time() - pinned.STALE_S - 60


def test_a_killed_runs_private_folder_is_removed_by_a_later_pin_once_stale(tmp_path, monkeypatch):
    private = tmp_path / "tmp"
    private.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    weights = tmp_path / "w.ckpt"
    weights.write_bytes(b"weights")
    # A run pins its weights, then is killed (SIGKILL, the OOM killer) before it can clean up.
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, tempfile; tempfile.tempdir = sys.argv[1]\n"
            "from ascend_finetune.models.pinned import PinnedFile\n"
            "p = PinnedFile(sys.argv[2]); print(p.read_path, flush=True); sys.stdin.read()",
            str(private),
            str(weights),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "runner")),
    )
    left = os.path.dirname(child.stdout.readline().strip())
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    if pid_alive(child.pid):
        pytest.skip(f"pid {child.pid} was given to another process already")
    assert os.path.isdir(left) and os.path.basename(left).startswith(f"ascend-weights-{child.pid}-")

    PinnedFile(str(weights)).close()
    assert os.path.isdir(left), "a day's grace: the pid may be another container's live run"
    os.utime(left, (AGED, AGED))
    # Kept: a live process's folder, names that are not a pin's (a digit outside ASCII used to end the
    # pin with a ValueError), one that holds more than a link, another user's, and a symlink named like one.
    mine = private / f"ascend-weights-{os.getpid()}-live"
    others = [private / "ascend-weights-notapid-x", private / "ascend-weights-\u00b2-x"]
    full = private / f"ascend-weights-{child.pid}-full"
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep").write_text("x")
    planted = private / f"ascend-weights-{child.pid}-planted"
    os.symlink(target, planted)
    kept = [mine, *others, full]
    if os.getuid() == 0:  # CI runs as root: a folder of another uid can be made here
        theirs = private / f"ascend-weights-{child.pid}-theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 65534, 65534)
        kept.append(theirs)
    for d in kept:
        d.mkdir(mode=0o700, exist_ok=True)
    (full / "notes.txt").write_text("not a pin's")
    for d in kept:
        os.utime(d, (AGED, AGED))
    os.utime(planted, (AGED, AGED), follow_symlinks=False)

    p = PinnedFile(str(weights))
    assert not os.path.lexists(left), "the killed run's folder is gone"
    assert all(d.is_dir() for d in kept) and (full / "notes.txt").exists()
    assert planted.is_symlink() and (target / "keep").exists()
    assert os.path.dirname(p.read_path) != left and os.path.samefile(p.read_path, weights)
    p.close()
