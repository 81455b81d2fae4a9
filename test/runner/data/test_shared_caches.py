"""Caches kept where other users can write: the image-scan cache ($ASCEND_FINETUNE_CACHE/scan, which
may be a team folder) and a run's feature cache (<run>/feature-cache, in a runs root others may
write to). Whatever is planted there, a FIFO, a symlink, a file or a folder, must neither hang the
runner, nor have it write through a symlink, nor end a run that could train without the cache."""

from __future__ import annotations

import errno
import json
import os
import shutil
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import events, of_type, runner, spec, write_spec

from ascend_finetune.data import folder as data
from ascend_finetune.data.demo import make_shapes

# -- the scan cache -----------------------------------------------------------------------------


@pytest.fixture
def image_set(tmp_path, monkeypatch):
    """A small ImageFolder root, with this test's own scan cache folder; (root, the cache file's path)."""
    monkeypatch.setenv("ASCEND_FINETUNE_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "set"
    make_shapes(str(root), per_class=3, size=32)
    path = data.scan_cache_path(str(root))
    os.makedirs(os.path.dirname(path))
    return root, path


def test_a_fifo_at_the_scan_cache_does_not_hang_validate(image_set, tmp_path):
    root, path = image_set
    os.mkfifo(path)  # opened for reading, it waits for a writer for ever
    s = spec(root, data={"batch_size": 4})
    code, out = runner("validate", str(write_spec(tmp_path / "s.json", s)), "--preflight", timeout=120)
    assert code == 0 and out["ok"], out


def test_a_symlink_at_the_scan_cache_temp_name_does_not_clobber_its_target(image_set, tmp_path, monkeypatch):
    # The name the cache was written to was <cache>.tmp-<pid>: anyone who can write the cache folder
    # could guess it and point it at a file of the user who runs the scan.
    root, path = image_set
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, f"{path}.tmp-{os.getpid()}")
    decoded = []
    real = data._check_image
    monkeypatch.setattr(data, "_check_image", lambda p: decoded.append(p) or real(p))
    first = data.scan(str(root), 2)
    assert victim.read_text() == "precious"
    assert len(first.samples) == 12 and len(decoded) == 12
    decoded.clear()
    assert data.scan(str(root), 2).samples == first.samples
    assert decoded == [], "the cache still saves the second scan its decoding"


@pytest.mark.parametrize(
    "planted",
    ["folder", "a list", "entries of another shape", "not JSON", "too large"],
)
def test_whatever_sits_at_the_scan_cache_only_means_no_cache(image_set, planted):
    root, path = image_set
    img = os.path.join(root, "red circle", "0000.png")
    if planted == "folder":
        os.mkdir(path)
        open(os.path.join(path, "keep"), "w").close()
    elif planted == "too large":
        with open(path, "wb") as f:
            f.truncate(data.SCAN_CACHE_MAX_BYTES + 1)  # sparse: no disk used
    else:
        text = {
            "a list": "[]",
            "entries of another shape": json.dumps({img: 5, os.path.join(root, "red circle", "0001.png"): {"a": 1}}),
            "not JSON": "{",
        }[planted]
        with open(path, "w") as f:
            f.write(text)
    for _ in range(2):
        s = data.scan(str(root), 2)
        assert len(s.samples) == 12 and s.skipped == []
    if planted == "folder":
        assert os.listdir(path) == ["keep"], "another's folder is left as it was"
    leftovers = [n for n in os.listdir(os.path.dirname(path)) if ".tmp-" in n]
    assert leftovers == [], "no temporary file is left behind in the shared folder"


# -- the feature cache --------------------------------------------------------------------------


def _spec(train_dir):
    """The smallest run that caches features: a frozen random backbone, one epoch."""
    return spec(
        train_dir,
        data={"batch_size": 8, "workers": 1},
        model={"freeze": "backbone"},
        train={"epochs": 1, "cache_features": True},
    )


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """(spec file, the cache key, the cache folder) of a run that built its cache undisturbed."""
    d = tmp_path_factory.mktemp("fc-ref")
    make_shapes(str(d / "set"), per_class=8, size=32)
    s = write_spec(d / "s.json", _spec(d / "set"))
    code, out = runner("train", str(s), "--run-dir", str(d / "runs" / "ref"))
    assert code == 0, out
    [fc] = of_type(events(d / "runs" / "ref"), "feature_cache")
    assert fc["compute_s"] > 0
    return s, fc["key"], d / "runs" / "ref" / "feature-cache" / fc["key"][:16]


def _train(spec_file, run_dir):
    """Train in run_dir (each test in a runs root of its own: no sibling's cache to reuse); its
    events, its feature_cache_rejected warnings and its feature_cache event."""
    code, out = runner("train", str(spec_file), "--run-dir", str(run_dir))
    assert code == 0, out
    evs = events(run_dir)
    assert of_type(evs, "run_finished")[0]["status"] == "completed"
    assert len(of_type(evs, "epoch_end")) == 1, "it trained"
    warns = [w for w in of_type(evs, "warning") if w["code"] == "feature_cache_rejected"]
    [fc] = of_type(evs, "feature_cache")
    return warns, fc


def test_a_file_planted_where_the_feature_cache_goes_is_passed_over(reference, tmp_path):
    # It ended the run with a NotADirectoryError traceback (exit 1) once the features were computed.
    spec_file, key, _ = reference
    run = tmp_path / "runs" / "mine"
    planted = run / "feature-cache" / key[:16]
    planted.parent.mkdir(parents=True)
    planted.write_text("not a cache")
    warns, fc = _train(spec_file, run)
    assert planted.read_text() == "not a cache"
    assert fc["compute_s"] > 0 and fc["reused_from"] is None
    assert [(w["details"]["path"], w["details"]["reason"]) for w in warns] == [
        (str(planted), f"{planted} is not a directory")
    ]
    assert [n for n in os.listdir(planted.parent)] == [key[:16]], "no temporary folder left behind"


def test_a_symlinked_feature_cache_folder_is_not_written_through(reference, tmp_path):
    spec_file, key, _ = reference
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("precious")
    run = tmp_path / "runs" / "mine"
    run.mkdir(parents=True)
    os.symlink(victim, run / "feature-cache")
    warns, fc = _train(spec_file, run)
    assert sorted(os.listdir(victim)) == ["keep"] and (victim / "keep").read_text() == "precious"
    assert fc["compute_s"] > 0
    [w] = warns
    assert w["details"]["reason"] == f"{run / 'feature-cache'} is a symlink", w


def test_a_cache_behind_a_symlinked_feature_cache_folder_is_not_taken_for_the_runs_own(reference, tmp_path):
    # The run's own cache is read without the owner checks a sibling's gets: through a symlink it
    # would be whatever the link's maker put there.
    spec_file, key, ref_cache = reference
    elsewhere = tmp_path / "someone-elses"
    shutil.copytree(ref_cache, elsewhere / key[:16])
    run = tmp_path / "runs" / "mine"
    run.mkdir(parents=True)
    os.symlink(elsewhere, run / "feature-cache")
    warns, fc = _train(spec_file, run)
    assert fc["compute_s"] > 0 and fc["reused_from"] is None, "computed its own features"
    assert [w["details"]["path"] for w in warns] == [str(run / "feature-cache" / key[:16])]


def _unsaved_cache(tmp_path, warnings):
    """A FeatureCache holding computed features, ready to save into tmp_path/run."""
    from ascend_finetune.train.feature_cache import FeatureCache

    fc = FeatureCache.__new__(FeatureCache)
    fc.tr = SimpleNamespace(run_dir=str(tmp_path / "run"), warn=lambda *a: warnings.append(a))
    fc.__dict__["key"] = "ab" * 32
    fc.views, fc.augment, fc.compute_s, fc.rejected, fc._no_save = 1, "none", 1.0, [], False
    fc._train, fc._train_labels = np.zeros((1, 2, 4), np.float32), np.zeros((1, 2), np.int32)
    fc._val, fc._val_labels = np.zeros((1, 4), np.float32), np.zeros((1,), np.int32)
    return fc


@pytest.mark.parametrize("planted", ["symlinked folder", "file"])
def test_what_is_planted_while_the_features_are_computed_is_not_written_through(tmp_path, planted):
    """The save itself, for what appears after the run looked (a race no whole run can stage): the
    features stay unsaved, with a warning, and nothing is written through a symlink."""
    warnings = []
    fc = _unsaved_cache(tmp_path, warnings)
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / "run").mkdir()
    if planted == "file":
        (tmp_path / "run" / "feature-cache").mkdir()
        (tmp_path / "run" / "feature-cache" / fc.key[:16]).write_text("not a cache")
    else:
        os.symlink(victim, tmp_path / "run" / "feature-cache")
    fc._save()
    assert os.listdir(victim) == []
    assert [w[0] for w in warnings] == ["feature_cache_rejected"] and fc.rejected[0]["path"] == fc.dir
    if planted == "file":
        assert os.listdir(tmp_path / "run" / "feature-cache") == [fc.key[:16]]
        assert (tmp_path / "run" / "feature-cache" / fc.key[:16]).read_text() == "not a cache"


@pytest.mark.parametrize(
    "failing, err",
    [
        ("mkdir", errno.EACCES),  # a feature-cache/ another user made (tests run as root: chmod would not stop it)
        ("savez", errno.ENOSPC),  # the disk filled while the features were written
    ],
)
def test_features_that_cannot_be_saved_leave_a_warning_not_a_traceback(tmp_path, monkeypatch, failing, err):
    # Both ended the run with a traceback after the features were computed: the cache only saves time.
    from ascend_finetune.train import feature_cache

    warnings = []
    fc = _unsaved_cache(tmp_path, warnings)
    (tmp_path / "run" / "feature-cache").mkdir(parents=True)
    real_mkdir = os.mkdir

    def mkdir(path, *a, **kw):
        if ".tmp-" in str(path):
            raise PermissionError(err, os.strerror(err), str(path))
        return real_mkdir(path, *a, **kw)

    def savez(*a, **kw):
        raise OSError(err, os.strerror(err))

    if failing == "mkdir":
        monkeypatch.setattr(feature_cache.os, "mkdir", mkdir)
    else:
        monkeypatch.setattr(feature_cache.np, "savez", savez)
    fc._save()
    monkeypatch.undo()
    [(code, message, details)] = warnings
    assert (code, details) == ("feature_cache_unsaved", {"path": fc.dir, "reason": os.strerror(err)}), details
    assert message.startswith(f"the features were not saved at {fc.dir} ({os.strerror(err)})")
    assert fc.rejected == [], "no cache was found and passed over"
    assert os.listdir(tmp_path / "run" / "feature-cache") == [], "no temporary folder left behind"


def test_another_users_cache_folder_this_user_cannot_replace_leaves_a_warning(tmp_path, monkeypatch):
    # ensure() passed over another user's feature-cache/<key> (mode 700: unreadable here); removing it
    # to put this run's in its place fails with EACCES, which ended the run with a traceback.
    from ascend_finetune.train import feature_cache

    warnings = []
    fc = _unsaved_cache(tmp_path, warnings)
    theirs = tmp_path / "run" / "feature-cache" / fc.key[:16]
    theirs.mkdir(parents=True)
    (theirs / "features.npz").write_text("theirs")

    def rmtree_at(dir_fd, name, quiet=False):
        if not quiet:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)

    monkeypatch.setattr(feature_cache, "_rmtree_at", rmtree_at)
    fc._save()
    monkeypatch.undo()
    assert [(w[0], w[2]["reason"]) for w in warnings] == [("feature_cache_unsaved", os.strerror(errno.EACCES))]
    assert (theirs / "features.npz").read_text() == "theirs"
