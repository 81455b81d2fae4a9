"""Frozen-backbone feature cache (`train.cache_features`): the head trains on cached backbone features,
the backbone stays untouched, the cache is keyed and reused by a later run, and a spec that cannot
use it is refused naming the field."""

from __future__ import annotations

import json
import os
import shutil
import time

import mindspore as ms
import numpy as np
import pytest
from conftest import assert_contiguous, events, of_type, runner, spec, write_spec

from ascend_finetune.train.feature_cache import cache_key


def _params(path, prefix):
    return {k: v.asnumpy() for k, v in ms.load_checkpoint(str(path)).items() if k.startswith(prefix)}


def _pretrained(run_a):
    best = next(e for e in json.load(open(run_a / "checkpoints.json")) if e["best"])
    return run_a / best["file"]


def _probe(data_b, pretrained, name, **train):
    # The same linear probe as test_finetune's transfer test (AdamW at 2e-4 for a from-scratch backbone).
    return spec(
        data_b,
        name=name,
        model={"pretrained": str(pretrained), "freeze": "backbone"},
        train={"epochs": 4, "optimizer": "adamw", "lr": 2e-4, "cache_features": True, **train},
        checkpoint={"keep_max": 10},
    )


@pytest.fixture(scope="module")
def cached_runs(run_a, data_b, tmp_path_factory):
    """Two runs of the same spec under one runs root: the first builds the cache, the second finds it."""
    root = tmp_path_factory.mktemp("fc-runs")
    s = _probe(data_b, _pretrained(run_a), "probe", cache_views=2)
    first, second = root / "first", root / "second"
    for d in (first, second):
        code, out = runner("train", str(write_spec(root / "s.json", s)), "--run-dir", str(d))
        assert code == 0, out
    return first, second


def test_the_head_learns_on_cached_features_and_the_backbone_is_untouched(run_a, cached_runs):
    first, _ = cached_runs
    evs = events(first)
    assert_contiguous(evs)
    epochs = of_type(evs, "epoch_end")
    assert len(epochs) == 4
    fc = epochs[0]["feature_cache"]
    assert fc["views"] == 2 and fc["reused_from"] is None and fc["compute_s"] > 0
    assert all("feature_cache" not in e for e in epochs[1:]), "described once, where it was built"
    assert epochs[-1]["train_loss"] < 0.8 * epochs[0]["train_loss"], "the head learns task B"
    assert of_type(evs, "eval")[-1]["val_acc"] > 1 / 3 + 0.1, "better than chance on 3 classes"
    # Checkpoints are whole-network checkpoints: the frozen backbone is the pretrained one.
    manifest = json.load(open(first / "checkpoints.json"))
    a_backbone, b_backbone = (
        _params(_pretrained(run_a), "backbone."),
        _params(first / manifest[-1]["file"], "backbone."),
    )
    assert len(a_backbone) == 100 and a_backbone.keys() == b_backbone.keys()
    for k in a_backbone:
        assert np.array_equal(a_backbone[k], b_backbone[k]), f"frozen {k} changed"
    cache = first / "feature-cache" / fc["key"][:16]
    meta = json.load(open(cache / "meta.json"))
    started = of_type(evs, "run_started")[0]
    assert meta["key"] == fc["key"] and meta["views"] == 2
    assert meta["train_images"] == started["num_train"] and meta["val_images"] == started["num_val"]
    assert meta["dim"] == 512  # resnet18's pooled features


def test_a_second_run_with_the_same_key_reuses_the_cache(cached_runs):
    first, second = cached_runs
    fc1 = of_type(events(first), "epoch_end")[0]["feature_cache"]
    fc2 = of_type(events(second), "epoch_end")[0]["feature_cache"]
    assert fc2["key"] == fc1["key"]
    assert fc2["reused_from"] == str(first) and fc2["compute_s"] is None
    assert not (second / "feature-cache").exists(), "found in the sibling run, not computed again"
    # where the features came from is recorded before the first step, and in status.json (so in `ls`)
    evs = events(second)
    [setup] = of_type(evs, "feature_cache")
    assert setup["reused_from"] == str(first) and setup["rejected"] == []
    assert setup["seq"] < of_type(evs, "step")[0]["seq"]
    status = json.loads((second / "status.json").read_text())
    assert status["feature_cache"] == {"key": fc1["key"], "reused_from": str(first), "rejected": []}
    assert not of_type(evs, "warning") or all(w["code"] != "feature_cache_rejected" for w in of_type(evs, "warning"))


def _poison(src, dst, uid=None, **change):
    """A copy of the cache folder src at dst with some arrays changed; chowned to uid (as root)."""
    shutil.copytree(src, dst)
    z = dict(np.load(dst / "features.npz"))
    for k, fn in change.items():
        z[k] = fn(z[k])
    np.savez(dst / "features.npz", **z)
    if uid is not None:
        run_dir = dst.parent.parent
        for p in (run_dir, dst.parent, dst, dst / "meta.json", dst / "features.npz"):
            os.chown(p, uid, uid)


@pytest.mark.skipif(os.getuid() != 0, reason="planting another user's run needs root (chown)")
def test_a_poisoned_or_mismatched_sibling_cache_is_not_reused(run_a, data_b, cached_runs, tmp_path):
    """Another user's run directory holds this run's cache key with every label set to 0 (reused, it
    made a run report val_acc 1.0); one of ours holds it one image short. Neither is used, each is
    named in a warning, and the run's metrics are the ones of a run that computed its own features."""
    first, _ = cached_runs
    key = of_type(events(first), "epoch_end")[0]["feature_cache"]["key"]
    src = first / "feature-cache" / key[:16]
    root = tmp_path / "runs"
    evil = root / "a-other-user" / "feature-cache" / key[:16]
    _poison(src, evil, uid=12345, train_labels=np.zeros_like, val_labels=np.zeros_like)
    short = root / "b-mine" / "feature-cache" / key[:16]
    _poison(src, short, train=lambda a: a[:, :-1], train_labels=lambda a: a[:, :-1])
    victim = root / "c-victim"
    s = _probe(data_b, _pretrained(run_a), "probe", cache_views=2)
    code, out = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(victim))
    assert code == 0, out
    evs = events(victim)
    warns = [w for w in of_type(evs, "warning") if w["code"] == "feature_cache_rejected"]
    assert [w["details"]["path"] for w in warns] == [str(evil), str(short)]
    assert all(w["message"].startswith(f"not reusing the feature cache at {w['details']['path']}: ") for w in warns)
    assert f"{root / 'a-other-user'} is owned by uid 12345, not by this user" in warns[0]["details"]["reason"]
    n = of_type(evs, "run_started")[0]["num_train"]
    assert f"train is float32 [2, {n - 1}, 512], this run's is float32 [2, {n}, 512]" in warns[1]["details"]["reason"]
    [setup] = of_type(evs, "feature_cache")
    assert setup["reused_from"] is None and setup["compute_s"] > 0
    assert [r["path"] for r in setup["rejected"]] == [str(evil), str(short)]
    assert (victim / "feature-cache" / key[:16] / "features.npz").exists(), "computed its own"
    status = json.loads((victim / "status.json").read_text())
    assert status["feature_cache"]["reused_from"] is None and len(status["feature_cache"]["rejected"]) == 2
    real = of_type(events(first), "eval")
    got = of_type(evs, "eval")
    assert [e["val_acc"] for e in got] == [e["val_acc"] for e in real]
    np.testing.assert_allclose([e["val_loss"] for e in got], [e["val_loss"] for e in real], rtol=1e-3)
    assert got[-1]["val_loss"] > 0.01, "not the poisoned cache's perfect score"


def test_a_cache_with_other_labels_in_our_own_sibling_is_not_reused(tmp_path):
    """The label check without a run: labels that differ from the run's own labels of the same images
    are refused even in this user's own directory."""
    from types import SimpleNamespace

    from ascend_finetune.train.feature_cache import FeatureCache, untrusted

    fc = FeatureCache.__new__(FeatureCache)
    fc.views = 1
    fc.tr = SimpleNamespace(
        train_samples=[("a", 0), ("b", 1), ("c", 2)],
        val_samples=[("d", 1)],
        classes=["x", "y", "z"],
        net=SimpleNamespace(backbone=SimpleNamespace(num_features=4)),
    )
    good = {
        "train": np.zeros((1, 3, 4), np.float32),
        "train_labels": np.array([[0, 1, 2]], np.int32),
        "val": np.zeros((1, 4), np.float32),
        "val_labels": np.array([1], np.int32),
    }
    assert fc._mismatch(good) is None
    assert "differs from this run's labels" in fc._mismatch({**good, "train_labels": np.array([[0, 0, 0]], np.int32)})
    assert "outside 0..2" in fc._mismatch({**good, "val_labels": np.array([7], np.int32)})
    assert "NaN" in fc._mismatch({**good, "val": np.full((1, 4), np.nan, np.float32)})
    assert "float64" in fc._mismatch({**good, "train": good["train"].astype(np.float64)})
    # the path rules: a symlink anywhere, a group- or world-writable directory
    run = tmp_path / "other"
    (run / "feature-cache" / "k").mkdir(parents=True)
    assert untrusted(str(run), str(run / "feature-cache" / "k")) is None
    (run / "feature-cache").chmod(0o777)
    assert "is writable by every user (mode 777)" in untrusted(str(run), str(run / "feature-cache" / "k"))
    (run / "feature-cache").chmod(0o755)
    os.symlink(run, tmp_path / "link")
    assert "is a symlink" in untrusted(str(tmp_path / "link"), str(tmp_path / "link" / "feature-cache" / "k"))


def test_without_augmentation_the_cached_run_is_the_same_training(run_a, data_b, tmp_path):
    # Same features, same shuffled batches (the image pipeline's sampler and seed): the losses of
    # the two runs agree step by step, up to floating-point rounding, and so do the evaluations.
    runs = {}
    for cache in (False, True):
        s = _probe(data_b, _pretrained(run_a), f"exact-{cache}", epochs=2, cache_features=cache)
        s["data"]["augment"] = "none"
        s["amp"] = {"level": "O0"}
        d = tmp_path / f"r{int(cache)}"
        code, out = runner("train", str(write_spec(tmp_path / f"s{int(cache)}.json", s)), "--run-dir", str(d))
        assert code == 0, out
        runs[cache] = events(d)
    plain, cached = ([e["loss"] for e in of_type(runs[c], "step")] for c in (False, True))
    assert len(plain) == len(cached) > 0
    np.testing.assert_allclose(cached, plain, rtol=1e-3, atol=1e-4)
    acc = [of_type(runs[c], "eval")[-1]["val_acc"] for c in (False, True)]
    assert acc[0] == acc[1]


def test_cache_features_needs_a_frozen_backbone(data_b, tmp_path):
    s = spec(data_b, model={"freeze": "none"}, train={"epochs": 1, "cache_features": True})
    code, out = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(tmp_path / "r"))
    assert code == 2
    err = out["error"]
    assert err["kind"] == "bad_input" and err["path"] == "train.cache_features"
    assert "model.freeze" in err["fix"]


def test_cache_features_with_several_devices_is_refused_before_msrun_starts(data_b, tmp_path):
    s = spec(
        data_b,
        model={"freeze": "backbone"},
        train={"epochs": 1, "cache_features": True},
        device={"target": "CPU", "ids": [0, 1]},
    )
    code, out = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(tmp_path / "r"))
    assert code == 2
    err = out["error"]
    assert err["kind"] == "bad_input" and err["path"] == "train.cache_features" and "2 device id(s)" in err["message"]
    assert not (tmp_path / "r" / "ranks").exists(), "msrun was never started"
    assert json.loads((tmp_path / "r" / "status.json").read_text())["state"] == "failed"


def test_the_key_follows_data_backbone_and_transforms(tmp_path):
    files = []
    for i in range(3):
        p = tmp_path / f"{i}.jpg"
        p.write_bytes(b"x" * (10 + i))
        files.append((str(p), i % 2))
    base = dict(backbone_hash="b" * 64, image_size=32, augment="basic", views=2, seed=1, amp_level="O0")
    k = cache_key(files, files[:1], **base)
    assert k == cache_key(files, files[:1], **base), "stable"
    assert k != cache_key(files, files[:1], **{**base, "backbone_hash": "c" * 64}), "other weights"
    assert k != cache_key(files, files[:1], **{**base, "image_size": 64}), "other transforms"
    assert k != cache_key(files, files[:1], **{**base, "views": 3})
    from dataclasses import replace

    from ascend_finetune.models.preprocess import TABLE
    from ascend_finetune.train.feature_cache import pixels_key

    # A preset's row keys as its name (caches made before per-weight values stay valid); the
    # weights' own mean/std give another key.
    assert pixels_key(replace(TABLE["timm"], why="x", source="hub_config")) == "timm"
    half = pixels_key(replace(TABLE["timm"], mean=(127.5,) * 3, std=(127.5,) * 3))
    assert isinstance(half, dict) and half["mean"] == [127.5] * 3
    assert cache_key(files, files[:1], **base, preprocess="timm") != cache_key(
        files, files[:1], **base, preprocess=half
    )
    assert k != cache_key([(files[0][0], 1)] + files[1:], files[:1], **base), "a label changed"
    os.utime(files[2][0], ns=(time.time_ns(), time.time_ns() + 10**9))
    assert k != cache_key(files, files[:1], **base), "a file was rewritten"
