"""Issue 19's first knobs, each on a real short CPU run or a real loss/pipeline: early stopping,
the plateau schedule, label smoothing, class weights, balanced sampling, the weights' EMA, and a
resume that keeps their state."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
from conftest import events, of_type, runner, spec, write_spec
from PIL import Image

from ascend_finetune.data.folder import DataError
from ascend_finetune.data.pipeline import make_dataset
from ascend_finetune.data.sampling import balanced_epoch
from ascend_finetune.train.loss import class_weights, make_loss


def _log_softmax(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


BATCH_X = np.array(
    [[2.0, -1.0, 0.5, 3.0], [0.1, 0.2, -0.3, 0.0], [-2.0, 4.0, 1.0, 0.0], [1.0, 1.0, 1.0, 5.0]], np.float32
)
BATCH_Y = np.array([3, 0, 1, 1], np.int32)


def _loss(train: dict, counts: list[int]) -> float:
    fn = make_loss(train, np.array(counts))
    return float(fn(ms.Tensor(BATCH_X), ms.Tensor(BATCH_Y)).asnumpy())


def test_label_smoothing_and_class_weights_follow_the_formula():
    lp, n, c = _log_softmax(BATCH_X.astype(np.float64)), len(BATCH_Y), 4
    rows = np.arange(n)
    # no knob: mean negative log-likelihood
    assert _loss({}, [10] * 4) == pytest.approx(-lp[rows, BATCH_Y].mean(), rel=1e-5)
    # smoothing s: target (1-s) on the label plus s/C everywhere (PyTorch's and MindSpore's definition)
    s = 0.2
    want = ((1 - s) * -lp[rows, BATCH_Y] + s / c * -lp.sum(axis=1)).mean()
    assert _loss({"label_smoothing": s}, [10] * 4) == pytest.approx(want, rel=1e-5)
    # auto weights on a 10:1-like count: n / (C * n_c), and the weighted mean over the batch's weights
    counts = [100, 10, 50, 40]
    w = sum(counts) / (c * np.array(counts, np.float64))
    assert class_weights("auto", np.array(counts)) == pytest.approx(w, rel=1e-6)
    want = (w[BATCH_Y] * -lp[rows, BATCH_Y]).sum() / w[BATCH_Y].sum()
    assert _loss({"class_weights": "auto"}, counts) == pytest.approx(want, rel=1e-5)
    # a list, together with smoothing (the smoothing term is weighted too)
    w = np.array([1.0, 4.0, 0.5, 2.0])
    nll = (w[BATCH_Y] * -lp[rows, BATCH_Y]).sum() / w[BATCH_Y].sum()
    smooth = (-(lp * w[None, :]).sum(axis=1)).sum() / w[BATCH_Y].sum()
    got = _loss({"class_weights": w.tolist(), "label_smoothing": s}, counts)
    assert got == pytest.approx((1 - s) * nll + s / c * smooth, rel=1e-5)
    with pytest.raises(DataError) as e:
        class_weights([1.0, 2.0], np.array(counts))
    assert e.value.path == "train.class_weights" and "4 classes" in e.value.message


@pytest.fixture(scope="module")
def data_10_to_1(tmp_path_factory) -> Path:
    """Two classes, 100 red and 10 blue images: a 10:1 imbalance."""
    root = tmp_path_factory.mktemp("imbalanced")
    for name, colour, n in (("big", (220, 30, 30), 100), ("small", (30, 30, 220), 10)):
        os.makedirs(root / name)
        for i in range(n):
            img = np.full((32, 32, 3), colour, np.uint8)
            img[i % 32, :, :] = 255  # distinct images
            Image.fromarray(img).save(root / name / f"{i}.png")
    return root


def _labels_of(samples, shards=None, shard=None) -> np.ndarray:
    d = make_dataset(samples, 32, 10, 1, True, False, 7, drop_remainder=False, num_shards=shards, shard_id=shard)
    return np.concatenate([y.asnumpy() for _, y in d.create_tuple_iterator(num_epochs=1)])


def test_balanced_sampling_gives_near_equal_classes_per_epoch(data_10_to_1):
    samples = [(str(p), 0) for p in sorted((data_10_to_1 / "big").iterdir())]
    samples += [(str(p), 1) for p in sorted((data_10_to_1 / "small").iterdir())]
    for epoch in (1, 2):
        drawn = balanced_epoch(samples, 1 + epoch)
        labels = _labels_of(drawn)  # through the real pipeline
        counts = np.bincount(labels, minlength=2)
        assert len(labels) == len(samples), "an epoch keeps its length (the plan's steps)"
        assert abs(counts[0] - counts[1]) <= 0.25 * len(samples), counts  # plain: 100 vs 10
        # two ranks: each takes its shard of the same drawn list, together the whole epoch
        parts = [np.bincount(_labels_of(drawn, 2, r), minlength=2) for r in (0, 1)]
        assert (parts[0] + parts[1]).tolist() == counts.tolist()
        assert all(abs(p[0] - p[1]) <= 0.3 * p.sum() for p in parts), parts
    assert balanced_epoch(samples, 2) == balanced_epoch(samples, 2), "seeded"
    assert balanced_epoch(samples, 2) != balanced_epoch(samples, 3), "a new draw each epoch"


def test_class_weights_of_the_wrong_length_fail_the_run_naming_the_field(data_10_to_1, tmp_path):
    s = spec(data_10_to_1, train={"epochs": 1, "class_weights": [1.0, 2.0, 3.0]})
    code, _ = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(tmp_path / "r"))
    assert code == 2
    err = events(tmp_path / "r")[-1]["error"]
    assert err["path"] == "train.class_weights" and "2 classes" in err["message"], err


def test_balanced_and_weighted_run_trains(data_10_to_1, tmp_path):
    s = spec(
        data_10_to_1,
        data={"sampling": "balanced", "val_split": 0.2},
        train={"epochs": 2, "class_weights": "auto", "label_smoothing": 0.1},
    )
    code, out = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(tmp_path / "r"))
    assert code == 0, out
    evs = events(tmp_path / "r")
    assert evs[-1]["status"] == "completed"
    steps = of_type(evs, "step")
    assert len(steps) == of_type(evs, "run_started")[0]["total_steps"]
    assert all(np.isfinite(x["loss"]) for x in steps)


# -- early stopping and plateau: a run whose validation metric stalls ---------------------------------

STALL = {
    # a frozen backbone and a learning rate too small to move the head: val_loss stays put
    "model": {"freeze": "backbone"},
    "train": {
        "epochs": 6,
        "lr": 1e-10,
        "lr_schedule": "plateau",
        "plateau": {"patience": 0, "factor": 0.5, "min_delta": 1e-3},
        "early_stopping": {"metric": "val_loss", "patience": 2, "min_delta": 1e-3},
    },
}


@pytest.fixture(scope="module")
def stalled(data_a, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("stall")
    code, out = runner("train", str(write_spec(d / "s.json", spec(data_a, **STALL))), "--run-dir", str(d / "r"))
    assert code == 0, out
    return d


def test_early_stopping_ends_the_run_completed_at_the_expected_epoch(stalled):
    evs = events(stalled / "r")
    started, fin = of_type(evs, "run_started")[0], evs[-1]
    spe = started["steps_per_epoch"]
    # epoch 1 sets the best, epochs 2 and 3 do not improve by 1e-3: patience 2 ends the run after epoch 3
    assert fin["type"] == "run_finished" and fin["status"] == "completed"
    assert [e["epoch"] for e in of_type(evs, "epoch_end")] == [1, 2, 3]
    assert fin["final"]["step"] == 3 * spe < started["total_steps"]
    es = fin["early_stop"]
    assert es["epoch"] == 3 and es["metric"] == "val_loss" and es["best_epoch"] == 1 and es["patience"] == 2
    assert "did not improve" in es["message"]
    assert fin["best"] is not None and os.path.isfile(stalled / "r" / fin["best"]["file"]), "best kept"


def test_plateau_lowers_the_lr_when_the_loss_stalls(stalled):
    evs = events(stalled / "r")
    drops = of_type(evs, "lr_reduced")
    # patience 0: every epoch after the first without improvement halves the rate
    assert [(d["epoch"], d["previous_lr"], d["lr"]) for d in drops] == [
        (2, pytest.approx(1e-10), pytest.approx(5e-11)),
        (3, pytest.approx(5e-11), pytest.approx(2.5e-11)),
    ]
    by_epoch = {}
    for s in of_type(evs, "step"):
        by_epoch.setdefault(s["epoch"], set()).add(round(s["lr"] / 1e-10, 6))
    assert by_epoch == {1: {1.0}, 2: {1.0}, 3: {0.5}}, "the step after a drop runs at the new rate"


def test_plateau_rate_reaches_the_compiled_step():
    """The rewritten schedule Parameter is what the compiled step reads: halving it halves the update."""
    from mindspore import nn

    from ascend_finetune.models.amp import build_train_step
    from ascend_finetune.train.plateau import apply

    def second_update(halve: bool) -> tuple[float, list[float]]:
        ms.set_seed(0)
        net = nn.Dense(4, 3)  # the same initial weights both times
        opt = nn.SGD(net.trainable_params(), ms.Tensor(np.full(4, 0.1, np.float32)))
        step = build_train_step(net, nn.CrossEntropyLoss(), opt, None)
        x, y = ms.Tensor(BATCH_X), ms.Tensor(BATCH_Y % 3)
        step(x, y)
        lrs = [0.1] * 4
        if halve:
            apply(opt, lrs, 1, 0.5)  # between updates, as the run does between epochs
        w0 = net.weight.asnumpy().copy()
        step(x, y)
        return float(np.abs(net.weight.asnumpy() - w0).sum()), lrs

    full, _ = second_update(False)
    half, lrs = second_update(True)
    assert lrs == [0.1, 0.05, 0.05, 0.05]
    assert full > 0 and half == pytest.approx(0.5 * full, rel=1e-4), (full, half)


# -- EMA, and resume keeping every knob's state -------------------------------------------------------


@pytest.fixture(scope="module")
def ema_run(data_a, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("ema")
    s = spec(data_a, train={"epochs": 2, "lr": 0.01, "ema": 0.9}, checkpoint={"keep_max": 10})
    code, out = runner("train", str(write_spec(d / "s.json", s)), "--run-dir", str(d / "r"))
    assert code == 0, out
    return d


def _tensors(path) -> dict[str, np.ndarray]:
    return {k: v.asnumpy() for k, v in ms.load_checkpoint(str(path)).items()}


def test_ema_weights_are_evaluated_checkpointed_and_load_for_eval(ema_run):
    run = ema_run / "r"
    evs = events(run)
    evals = of_type(evs, "eval")
    assert len(evals) == 2 and all(set(e["ema"]) >= {"val_loss", "val_acc"} for e in evals)
    manifest = json.load(open(run / "checkpoints.json"))
    ema = [e for e in manifest if e.get("kind") == "ema"]
    raw = [e for e in manifest if "kind" not in e]
    assert [e["epoch"] for e in ema] == [1, 2] and [e["epoch"] for e in raw] == [1, 2]
    assert ema[-1]["file"].endswith("-ema.ckpt") and ema[-1]["metrics"]["val_acc"] == evals[-1]["ema"]["val_acc"]
    w_raw, w_ema = _tensors(run / raw[-1]["file"]), _tensors(run / ema[-1]["file"])
    assert "head.weight" in w_ema and "moments.head.weight" not in w_ema, "weights only"
    assert not np.allclose(w_raw["head.weight"], w_ema["head.weight"]), "the average lags the weights"
    best = [e for e in manifest if e["best"]]
    assert len(best) == 1 and evs[-1]["best"]["file"] == best[0]["file"]
    code, out = runner("eval", "--run", str(run), "--ckpt", str(run / ema[-1]["file"]))
    assert code == 0, out
    assert out["accuracy"] == pytest.approx(evals[-1]["ema"]["val_acc"], abs=1e-6)


def test_resume_keeps_ema_plateau_and_early_stopping_state(ema_run, stalled, tmp_path):
    # EMA: resumed from epoch 1, the epoch-2 average matches the uninterrupted run's (a restarted
    # average would equal the epoch-1 weights plus one epoch of updates, far from it)
    run = ema_run / "r"
    manifest = json.load(open(run / "checkpoints.json"))
    e1 = next(e for e in manifest if e["epoch"] == 1 and "kind" not in e)
    code, out = runner(
        "train", str(ema_run / "s.json"), "--run-dir", str(tmp_path / "ema"), "--resume", str(run / e1["file"])
    )
    assert code == 0, out
    evs = events(tmp_path / "ema")
    assert not [w for w in of_type(evs, "warning") if w["code"].startswith("ema_")], "the shadow was found"
    again = json.load(open(tmp_path / "ema" / "checkpoints.json"))
    ema2 = next(e for e in again if e.get("kind") == "ema" and e["epoch"] == 2)
    want = _tensors(run / next(e for e in manifest if e.get("kind") == "ema" and e["epoch"] == 2)["file"])
    got = _tensors(tmp_path / "ema" / ema2["file"])
    raw2 = _tensors(tmp_path / "ema" / next(e for e in again if "kind" not in e and e["epoch"] == 2)["file"])
    gap = np.abs(want["head.weight"] - raw2["head.weight"]).max()
    assert np.abs(got["head.weight"] - want["head.weight"]).max() < 0.05 * gap

    # plateau and early stopping: resumed after epoch 2 (one bad epoch, rate halved once), the run
    # runs epoch 3 at the halved rate, halves it again and stops there, as the uninterrupted one did
    smanifest = json.load(open(stalled / "r" / "checkpoints.json"))
    ck = next(e for e in smanifest if e["epoch"] == 2)
    code, out = runner(
        "train", str(stalled / "s.json"), "--run-dir", str(tmp_path / "st"), "--resume", str(stalled / "r" / ck["file"])
    )
    assert code == 0, out
    evs = events(tmp_path / "st")
    assert {round(s["lr"] / 1e-10, 6) for s in of_type(evs, "step")} == {0.5}
    assert [d["epoch"] for d in of_type(evs, "lr_reduced")] == [3]
    assert evs[-1]["status"] == "completed" and evs[-1]["early_stop"]["epoch"] == 3
    assert evs[-1]["early_stop"]["best_epoch"] == 1
    shutil.rmtree(tmp_path / "st", ignore_errors=True)
