"""model.pretrained is checked (and a named source hashed) before MindSpore loads it by path: a file put
in its place, or rewritten, meanwhile must not train under the checked file's name and sha256. The run
compares the file's device, inode, size and mtime before and after (weights_setup.check_unchanged)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, events, of_type, spec, write_spec

from ascend_finetune.checkpoints.errors import PretrainedError
from ascend_finetune.models.download import fetch, identity_of
from ascend_finetune.train.weights_setup import check_unchanged, starting_weights

# `train` with load_backbone wrapped so that, once it has read the file, another file is renamed into
# its place: what a second download, a Copy Weights to Target or another user of a shared cache does.
SWAPPING_TRAIN = """
import os, sys
import ascend_finetune.models.pretrained as pretrained
from ascend_finetune.cli import main
real = pretrained.load_backbone
def load_then_swap(net, path):
    out = real(net, path)
    os.replace(os.environ["SWAP_IN"], path)
    return out
pretrained.load_backbone = load_then_swap
sys.argv[0] = "ascend_finetune"
raise SystemExit(main())
"""


def best_of(run) -> str:
    return str(run / next(e for e in json.loads((run / "checkpoints.json").read_text()) if e["best"])["file"])


def test_a_file_swapped_while_the_run_loads_it_fails_the_run_with_pretrained_changed(run_a, data_b, tmp_path):
    weights = tmp_path / "colleague.ckpt"
    shutil.copy(best_of(run_a), weights)
    other = tmp_path / "other.ckpt"
    shutil.copy(best_of(run_a), other)  # the same bytes, even: another file all the same
    s = write_spec(tmp_path / "b.json", spec(data_b, name="b", model={"pretrained": str(weights)}))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"), SWAP_IN=str(other))
    r = subprocess.run(
        [sys.executable, "-c", SWAPPING_TRAIN, "train", str(s), "--run-dir", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 2, r.stdout[-2000:] + r.stderr[-2000:]
    end = of_type(events(tmp_path / "run"), "run_finished")[-1]
    assert end["status"] == "failed" and end["error"]["code"] == "pretrained_changed", end
    assert end["error"]["params"] == {"path": str(weights)}
    assert not of_type(events(tmp_path / "run"), "step"), "nothing trained on the swapped file"


def test_the_identity_is_taken_before_the_first_read_and_any_change_is_caught(run_a, tmp_path):
    weights = tmp_path / "w.ckpt"
    shutil.copy(best_of(run_a), weights)
    start = starting_weights({"model": {"pretrained": str(weights)}}, None, None)
    assert start.identity == identity_of(os.stat(weights)) and start.origin == "runner"
    check_unchanged(str(weights), start.identity)  # untouched: no error

    st = os.stat(weights)
    with open(weights, "r+b") as f:  # rewritten in place: the same inode and size, another mtime
        f.write(f.read(1))
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    with pytest.raises(PretrainedError) as e:
        check_unchanged(str(weights), start.identity)
    assert (e.value.why, e.value.params) == ("pretrained_changed", {"path": str(weights)})

    os.unlink(weights)  # gone: it may have been swapped before it went, and the message says it went
    with pytest.raises(PretrainedError, match="was removed while the run loaded it"):
        check_unchanged(str(weights), start.identity)

    # A run's rank: the file the launcher resolved the preprocessing from (ranks/preprocess.json) is another.
    weights.write_bytes(b"x")
    now = identity_of(os.stat(weights))
    check_unchanged(str(weights), now, list(now))
    with pytest.raises(PretrainedError, match="changed"):
        check_unchanged(str(weights), now, [now[0], now[1] + 1, now[2], now[3]])


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
