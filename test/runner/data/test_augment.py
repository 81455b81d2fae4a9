"""Augmentation presets and mixup/cutmix through the real MindSpore pipeline: every preset gives valid,
varied batches; mixing gives soft label rows that sum to 1; evaluation is never augmented; a short CPU
run trains on mixed batches with a policy."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import events, of_type, runner, spec, write_spec

from ascend_finetune.data.augment import PRESETS
from ascend_finetune.data.demo import make_shapes
from ascend_finetune.data.folder import scan


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    root = tmp_path_factory.mktemp("aug") / "shapes"
    make_shapes(str(root), per_class=8, size=48, seed=3)
    return scan(str(root), 2).samples


def _batches(samples, train=True, augment="basic", seed=7, mix=None, shuffle=False):
    from ascend_finetune.data.pipeline import make_dataset

    ds = make_dataset(
        samples,
        32,
        8,
        2,
        train,
        augment,
        seed,
        drop_remainder=True,
        shuffle=shuffle,
        on_device=True,
        mix=mix,
        num_classes=4,
    )
    return [(x, y) for x, y in ds.create_tuple_iterator(num_epochs=1, output_numpy=True)]


@pytest.mark.parametrize("preset", PRESETS)
def test_each_preset_gives_valid_varied_batches(samples, preset):
    a, b = _batches(samples, augment=preset, seed=7), _batches(samples, augment=preset, seed=8)
    assert len(a) == len(samples) // 8
    for x, y in a:
        assert x.shape == (8, 3, 32, 32) and x.dtype == np.uint8
        assert y.dtype == np.int32 and y.shape == (8,)
    assert [y.tolist() for _, y in a] == [y.tolist() for _, y in b], "augmentation leaves the labels"
    plain = _batches(samples, train=False)
    if preset == "none":  # the eval transform, whatever the seed
        assert all(np.array_equal(x, p) for (x, _), (p, _) in zip(a, plain))
        assert all(np.array_equal(x, q) for (x, _), (q, _) in zip(a, b))
    else:  # random: another seed gives other pixels, and none of it is the eval image
        assert any(not np.array_equal(x, q) for (x, _), (q, _) in zip(a, b))
        assert all(not np.array_equal(x, p) for (x, _), (p, _) in zip(a, plain))


def test_policies_change_the_basic_crop(samples):
    """Same seed, same crop draws: a policy op on top makes the pixels differ from `basic`'s."""
    basic = _batches(samples, augment="basic")
    for preset in ("randaugment", "trivialaugment", "autoaugment"):
        out = _batches(samples, augment=preset)
        changed = sum(not np.array_equal(x[i], bx[i]) for (x, _), (bx, _) in zip(out, basic) for i in range(8))
        assert changed >= 8, f"{preset} changed only {changed} of {8 * len(out)} images"


@pytest.mark.parametrize("mix", [(0.4, 0.0), (0.0, 1.0), (0.4, 1.0)], ids=["mixup", "cutmix", "both"])
def test_mixing_gives_soft_label_rows(samples, mix):
    # shuffled: in file order a batch of 8 holds one class, and mixing it changes no label
    out = _batches(samples, mix=mix, shuffle=True)
    labels = np.concatenate([y for _, y in out])
    assert labels.dtype == np.float32 and labels.shape == (len(samples) // 8 * 8, 4)
    assert np.allclose(labels.sum(axis=1), 1.0, atol=1e-6), "each row is a distribution over the classes"
    assert (labels >= 0).all()
    one_hot = np.isclose(labels.max(axis=1), 1.0)
    assert not one_hot.all(), "alpha > 0: some rows mix two classes"
    assert ((labels > 1e-6).sum(axis=1) <= 2).all(), "a row mixes at most two images' labels"
    unmixed = _batches(samples, shuffle=True)
    assert any(not np.array_equal(x, u) for (x, _), (u, _) in zip(out, unmixed)), "the images are mixed too"


def test_evaluation_is_never_augmented_or_mixed(samples):
    plain = _batches(samples, train=False, augment="basic")
    ev = _batches(samples, train=False, augment="randaugment", mix=(1.0, 1.0))
    for (x, y), (p, q) in zip(ev, plain):
        assert np.array_equal(x, p) and y.dtype == np.int32 and np.array_equal(y, q)


def test_a_run_trains_on_mixed_policy_batches(data_a, tmp_path):
    s = spec(
        data_a,
        name="aug",
        data={"augment": "trivialaugment", "mixup": 0.4, "cutmix": 1.0},
        train={"epochs": 2, "lr": 0.01},
    )
    code, out = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(tmp_path / "run"))
    assert code == 0, out
    evs = events(tmp_path / "run")
    assert of_type(evs, "run_started")[0]["spec"]["data"]["augment"] == "trivialaugment"
    steps = of_type(evs, "step")
    assert steps and all(np.isfinite(st["loss"]) for st in steps)
    evals = of_type(evs, "eval")
    assert len(evals) == 2 and all(np.isfinite(e["val_loss"]) for e in evals)
    assert evs[-1]["status"] == "completed"


def test_mixing_with_cached_features_is_refused(data_a, tmp_path):
    s = spec(data_a, name="mixcache", data={"mixup": 0.2}, model={"freeze": "backbone"}, train={"cache_features": True})
    code, out = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(tmp_path / "run"))
    assert code == 2, out
    end = of_type(events(tmp_path / "run"), "run_finished")[0]
    assert end["error"]["path"] == "data.mixup" and "cache_features" in end["error"]["fix"]
    json.dumps(end)
