"""model.pretrained is opened once, and every read of the run (its origin, the load, the sha256 it
records) goes through that descriptor (models/pinned.py): a file renamed into its place meanwhile is
not what the run trains on. A rewrite in place, or a rank that finds another file than its launcher
resolved, fails the run with pretrained_changed (weights_setup.check_unchanged)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from conftest import ROOT, events, of_type, spec, write_spec

from ascend_finetune.checkpoints.errors import PretrainedError
from ascend_finetune.checkpoints.format import read_index
from ascend_finetune.models.download import fetch, identity_of, sha256_of
from ascend_finetune.train.weights_setup import StartingWeights, check_unchanged, starting_weights

# `train` with other weights renamed into the file's place from the moment the run has opened it
# until the run checks it after the load (the first file renamed back just before): every read of the
# run in between (origin, preprocessing record, load, sha256, lineage) meets the other file by name.
# What someone who can write a shared cache's folder can do.
SWAP_WHILE_PINNED = """
import os, sys
import ascend_finetune.models.pinned as pinned
import ascend_finetune.train.trainer as trainer
from ascend_finetune.cli import main
target, other = os.environ["TARGET"], os.environ["SWAP_IN"]
real_init, real_check = pinned.PinnedFile.__init__, trainer.check_unchanged
def init_then_swap(self, path):
    real_init(self, path)
    os.replace(target, target + ".away")
    os.replace(other, target)
    open(os.environ["MARKER"], "a").write("swapped\\n")
def back_then_check(*args, **kwargs):
    os.replace(target, other)
    os.replace(target + ".away", target)
    return real_check(*args, **kwargs)
pinned.PinnedFile.__init__ = init_then_swap
trainer.check_unchanged = back_then_check
sys.argv[0] = "ascend_finetune"
raise SystemExit(main())
"""


def checkpoints_of(run) -> list[dict]:
    return json.loads((run / "checkpoints.json").read_text())


def best_of(run) -> str:
    return str(run / next(e for e in checkpoints_of(run) if e["best"])["file"])


def test_weights_renamed_into_place_during_the_load_are_not_what_the_run_trains_on(run_a, data_b, tmp_path):
    weights = tmp_path / "colleague.ckpt"
    shutil.copy(best_of(run_a), weights)
    first_sha = sha256_of(str(weights))
    other = tmp_path / "other.ckpt"  # another epoch of the same run: the same names and shapes, other values
    shutil.copy(run_a / next(e for e in checkpoints_of(run_a) if not e["best"])["file"], other)
    marker = tmp_path / "swapped"
    s = spec(data_b, name="b", model={"pretrained": str(weights), "freeze": "backbone"}, train={"epochs": 1})
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"), TARGET=str(weights), SWAP_IN=str(other), MARKER=str(marker))
    run = tmp_path / "run"
    spec_file = str(write_spec(tmp_path / "b.json", s))
    r = subprocess.run(
        [sys.executable, "-c", SWAP_WHILE_PINNED, "train", spec_file, "--run-dir", str(run)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert marker.read_text() == "swapped\n", "the other file was in place while the run read"
    (started,) = of_type(events(run), "run_started")
    assert started["pretrained"]["file"] == str(weights)
    assert started["pretrained"]["sha256"] == first_sha
    # The frozen backbone is what was loaded: the first file's, not the one renamed in for the load.
    mine = read_index(str(run / checkpoints_of(run)[-1]["file"]))
    first, swapped = read_index(str(weights)), read_index(str(other))
    convs = [n for n, e in first.tensors.items() if n.startswith("backbone.") and len(e.shape) == 4]
    assert convs and any(not np.array_equal(first.read(n), swapped.read(n)) for n in convs), "the files differ"
    for n in convs:
        assert np.array_equal(mine.read(n), first.read(n)), n


def test_the_file_is_pinned_before_the_first_read_and_a_rewrite_in_place_is_caught(run_a, tmp_path):
    weights = tmp_path / "w.ckpt"
    shutil.copy(best_of(run_a), weights)
    start = starting_weights({"model": {"pretrained": str(weights)}}, None, None)
    assert start.identity == identity_of(os.stat(weights)) and start.origin == "runner"
    link = start.read_path
    assert link != str(weights) and os.path.basename(link) == "w.ckpt" and os.path.samefile(link, weights)
    assert oct(os.stat(os.path.dirname(link)).st_mode & 0o777) == "0o700"
    check_unchanged(start)  # untouched: no error

    os.rename(weights, tmp_path / "moved.ckpt")  # pinned: renames and removals do not change what is read
    weights.write_bytes(b"another file")
    check_unchanged(start)
    assert read_index(link).size == os.path.getsize(tmp_path / "moved.ckpt")

    moved = tmp_path / "moved.ckpt"
    st = os.stat(moved)
    with open(moved, "r+b") as f:  # rewritten in place: the same inode and size, another mtime
        f.write(f.read(1))
    os.utime(moved, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    with pytest.raises(PretrainedError) as e:
        check_unchanged(start)
    assert (e.value.why, e.value.params) == ("pretrained_changed", {"path": str(weights)})
    start.close()
    assert not os.path.exists(os.path.dirname(link)), "the private link's folder is gone"

    # Not pinned (no /proc): the name is checked, and a removed file says so.
    unpinned = StartingWeights("default", str(weights), None, "runner", identity_of(os.stat(weights)))
    check_unchanged(unpinned)
    os.unlink(weights)
    with pytest.raises(PretrainedError, match="was removed while the run loaded it"):
        check_unchanged(unpinned)

    # A run's rank: the file the launcher resolved the preprocessing from (ranks/preprocess.json) is another.
    weights.write_bytes(b"x")
    now = identity_of(os.stat(weights))
    mine = StartingWeights("default", str(weights), None, None, now)
    check_unchanged(mine, list(now))
    with pytest.raises(PretrainedError, match="changed"):
        check_unchanged(mine, [now[0], now[1] + 1, now[2], now[3]])


def test_a_bad_file_is_named_as_given_and_leaves_no_private_link(run_a, tmp_path, monkeypatch):
    private = tmp_path / "tmp"
    private.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    weights = tmp_path / "cut.ckpt"
    weights.write_bytes(open(best_of(run_a), "rb").read()[:5000])  # cut off
    with pytest.raises(PretrainedError) as e:
        starting_weights({"model": {"pretrained": str(weights)}}, None, None)
    assert str(e.value).startswith("cut.ckpt is not a usable checkpoint"), str(e.value)
    assert "ascend-weights-" not in json.dumps(e.value.params)
    assert os.listdir(private) == [], "the pin's folder went with the failure"

    # A reader's error that names the path it was given names the file, not the private link.
    whole = tmp_path / "whole.ckpt"
    shutil.copy(best_of(run_a), whole)
    start = starting_weights({"model": {"pretrained": str(whole)}}, None, None)
    with pytest.raises(PretrainedError) as e, start.named():
        raise PretrainedError(f"cannot use {start.read_path}", "x", path=start.read_path)
    assert (str(e.value), e.value.params) == (f"cannot use {whole}", {"path": str(whole)})
    start.close()
    assert os.listdir(private) == []


def test_a_fetched_file_replaced_after_it_was_hashed_is_refused_before_it_is_read(run_a, tmp_path, monkeypatch):
    from ascend_finetune.models import download

    weights = tmp_path / "r18.ckpt"
    shutil.copy(best_of(run_a), weights)
    hashed_then = (1, 2, 3, 4)  # the identity of the file the cache hashed: another one than is there now
    got = download.Fetched(
        str(weights), "mindcv:resnet18", "http://x/r18.ckpt", "0" * 64, downloaded=False, identity=hashed_then
    )
    monkeypatch.setattr(download, "local_weights", lambda value, progress=None: (str(weights), got))
    with pytest.raises(PretrainedError) as e:
        starting_weights({"model": {"pretrained": "mindcv:resnet18"}}, None, None)
    assert (e.value.why, e.value.params) == ("pretrained_changed", {"path": str(weights)})


def test_a_named_sources_identity_is_the_hashed_files(run_a, tmp_path):
    """A mindcv: file found in the cache: its identity is taken from the descriptor it was hashed through."""
    env = {"ASCEND_FINETUNE_CACHE": str(tmp_path / "cache"), "ASCEND_FINETUNE_WEIGHTS_URL": "http://127.0.0.1:1"}
    from ascend_finetune.models.catalog import parse
    from ascend_finetune.models.download import cache_path

    dest = cache_path(parse("mindcv:resnet18"), env)
    os.makedirs(os.path.dirname(dest))
    shutil.copy(best_of(run_a), dest)
    got = fetch("mindcv:resnet18", env=env, progress=lambda *_: None)
    assert (got.downloaded, got.identity) == (False, identity_of(os.stat(dest)))


@pytest.mark.parametrize("why", ["no usable temporary folder", "a full TMPDIR", "a link that does not open the file"])
def test_without_a_private_link_the_name_is_read_and_still_checked(run_a, tmp_path, monkeypatch, why):
    """A full disk, or a sandbox that refuses /proc/self/fd: the run reads the name, and keeps the
    identity checks (a named source must be the file the cache hashed)."""
    from ascend_finetune.models import download, pinned

    private = tmp_path / "tmp"
    private.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    tried = []
    if why == "no usable temporary folder":

        def no_tempdir():
            tried.append("gettempdir")
            raise FileNotFoundError(2, "No usable temporary directory found")

        monkeypatch.setattr(pinned.tempfile, "gettempdir", no_tempdir)
    elif why == "a full TMPDIR":

        def no_folder(*a, **kw):
            tried.append("mkdtemp")
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(pinned.tempfile, "mkdtemp", no_folder)
    else:
        (tmp_path / "no-fds").mkdir()
        monkeypatch.setattr(pinned, "PROC_FD", str(tmp_path / "no-fds"))  # every link dangles
        tried.append("link")
    weights = tmp_path / "w.ckpt"
    shutil.copy(best_of(run_a), weights)
    start = starting_weights({"model": {"pretrained": str(weights)}}, None, None)
    assert tried, "the failure was met"
    assert (start.read_path, start.origin) == (str(weights), "runner") and not start.pin.pinned
    assert os.listdir(private) == [], "no folder left from the link that failed"
    assert start.identity == identity_of(os.stat(weights))
    os.replace(tmp_path / "w.ckpt", tmp_path / "gone.ckpt")
    weights.write_bytes(b"another file")
    with pytest.raises(PretrainedError, match="changed"):
        check_unchanged(start)
    start.close()

    got = download.Fetched(str(weights), "mindcv:resnet18", "http://x/r18.ckpt", "0" * 64, False, identity=(1, 2, 3, 4))
    monkeypatch.setattr(download, "local_weights", lambda value, progress=None: (str(weights), got))
    with pytest.raises(PretrainedError) as e:
        starting_weights({"model": {"pretrained": "mindcv:resnet18"}}, None, None)
    assert e.value.why == "pretrained_changed"
