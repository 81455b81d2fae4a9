"""Gradient accumulation (train.accumulate_steps): k micro-batches give the update of one batch k times
larger; a non-finite micro-batch skips the whole update; a real CPU run counts steps in updates and
resumes at an update boundary."""

from __future__ import annotations

import json

import mindspore as ms
import numpy as np
import pytest
from conftest import events, of_type, runner, spec, write_spec
from mindspore import amp, nn

from ascend_finetune.models.amp import build_train_step
from ascend_finetune.models.net import TransferNet, apply_freeze, frozen_parts
from ascend_finetune.train.accumulate import AccumulateStep, Accumulating

K, B = 4, 4


def _net(seed):
    ms.set_seed(seed)
    net = TransferNet("resnet18", 3, frozen_parts("up_to:layer3"))
    apply_freeze(net)
    return net


def _bn_eval(net):
    # Every BatchNorm on its moving statistics: a sample's output then does not depend on the rest
    # of its batch, so k micro-batches and one big batch see the same forward pass. layer4's
    # convolutions and the head train.
    net.backbone.set_train(False)


def _copy(src, dst):
    for a, b in zip(src.get_parameters(), dst.get_parameters()):
        b.set_data(a.data.copy())


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(K * B, 3, 32, 32)).astype(np.float32), rng.integers(0, 3, K * B).astype(np.int32)


def _trained(net):
    return {p.name: p.asnumpy().copy() for p in net.trainable_params()}


@pytest.mark.parametrize("optimizer", ["sgd", "momentum"])
def test_k_micro_batches_give_the_update_of_one_batch_k_times_larger(optimizer):
    ms.set_context(mode=ms.GRAPH_MODE)
    big, acc = _net(3), _net(4)
    _copy(big, acc)
    make = {
        "sgd": lambda n: nn.SGD(n.trainable_params(), 0.01),
        "momentum": lambda n: nn.Momentum(n.trainable_params(), 0.01, 0.9),
    }[optimizer]
    loss_fn = nn.CrossEntropyLoss()
    one = build_train_step(big, loss_fn, make(big), None)
    step = AccumulateStep(acc, loss_fn, make(acc), None, K)
    step.set_train(True)
    accumulating = Accumulating(step)
    _bn_eval(big)
    _bn_eval(acc)
    start = _trained(big)
    for seed in range(2):  # two updates: the second starts from emptied accumulators (and momentum)
        x, y = _data(seed)
        out_big = one(ms.Tensor(x), ms.Tensor(y)).asnumpy()
        xs = [ms.Tensor(x[i * B : (i + 1) * B]) for i in range(K)]
        ys = [ms.Tensor(y[i * B : (i + 1) * B]) for i in range(K)]
        out_acc = accumulating(xs, ys).asnumpy()
        # the loss: mean of the micro-batches' means = the big batch's mean (equal batch sizes)
        assert out_acc[0] == pytest.approx(out_big[0], rel=1e-5)
        assert out_acc[3] == out_big[3] == 1.0, "both updated"
    a, b = _trained(big), _trained(acc)
    assert any("layer4" in n for n in a) and "head.weight" in a
    for n in a:
        d_big, d_acc = a[n] - start[n], b[n] - start[n]
        assert np.linalg.norm(d_big) > 0, f"{n} did not train"
        # Tolerance: the mean of k gradients and the gradient of the mean differ only by float32
        # summation order (~1e-7 relative per element); over two updates the accumulated update
        # stays within 1e-4 of the big batch's, relative to its size (norm of the difference).
        assert np.linalg.norm(d_acc - d_big) <= 1e-4 * np.linalg.norm(d_big), n


def test_a_non_finite_micro_batch_skips_the_whole_update():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = _net(5)
    scaler = amp.DynamicLossScaler(2.0**30, 2, 1000)
    step = AccumulateStep(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.5), scaler, K)
    step.set_train(True)
    accumulating = Accumulating(step)
    _bn_eval(net)
    x, y = _data(1)
    xs = [ms.Tensor(x[i * B : (i + 1) * B]) for i in range(K)]
    ys = [ms.Tensor(y[i * B : (i + 1) * B]) for i in range(K)]
    # Features of ~1e30 (the CPU kernels drop a NaN or Inf pixel in ReLU and max-pool): the loss stays
    # finite, the head's gradient times the 2^30 scale overflows float32 in this micro-batch only.
    bad = x[2 * B : 3 * B] * np.float32(1e30)
    before = _trained(net)
    loss, finite, scale, updated, _ = accumulating(xs[:2] + [ms.Tensor(bad)] + xs[3:], ys).asnumpy().tolist()
    assert finite == 0.0 and updated == 0.0 and scale == 2.0**29, "one bad micro-batch: no update, the scale halves"
    after = _trained(net)
    assert all(np.array_equal(before[n], after[n]) for n in before), "nothing of the bad update was applied"
    loss, finite, scale, updated, correct = accumulating(xs, ys).asnumpy().tolist()
    assert finite == 1.0 and updated == 1.0 and np.isfinite(loss), "the next update starts from empty sums"
    assert correct == float(int(correct)) and 0 <= correct <= K * B, "the k micro-batches' correct predictions"
    assert all(np.isfinite(p).all() for p in _trained(net).values())


def test_a_run_counts_updates_and_resumes_at_an_update_boundary(data_a, tmp_path):
    s = spec(
        data_a,
        name="acc",
        data={"batch_size": 8},
        train={"epochs": 2, "lr": 0.01, "accumulate_steps": 3},
        checkpoint={"every_steps": 2, "keep_max": 50},
    )
    code, out = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(tmp_path / "run"))
    assert code == 0, out
    evs = events(tmp_path / "run")
    started = of_type(evs, "run_started")[0]
    batches = started["num_train"] // 8
    assert started["steps_per_epoch"] == batches // 3 and started["global_batch"] == 24
    steps = of_type(evs, "step")
    assert [st["step"] for st in steps] == list(range(1, started["total_steps"] + 1))
    assert all(np.isfinite(st["loss"]) for st in steps)
    mid = next(c for c in of_type(evs, "checkpoint") if c["step"] % started["steps_per_epoch"])
    code, out = runner(
        "train",
        str(tmp_path / "s.json"),
        "--run-dir",
        str(tmp_path / "resumed"),
        "--resume",
        str(tmp_path / "run" / mid["file"]),
    )
    assert code == 0, out
    rev = events(tmp_path / "resumed")
    assert of_type(rev, "run_started")[0]["resumed_from"]["step"] == mid["step"]
    assert [st["step"] for st in of_type(rev, "step")] == list(range(mid["step"] + 1, started["total_steps"] + 1))
    json.dumps(rev[-1])
    assert rev[-1]["status"] == "completed"


LOOP = """
import json, sys
from ascend_finetune.spec import resolve
from ascend_finetune.train.trainer import Trainer
tr = Trainer(resolve(json.loads(sys.argv[1])), sys.argv[2], [])
recs = list(tr.epoch_steps(1, 0))
out = {"spe": tr.steps_per_epoch, "n": len(tr.train_samples), "gb": tr.global_batch, "applied": tr.applied}
print(json.dumps({**out, "recs": recs}))
"""


def test_the_trainers_step_loop_takes_k_batches_per_step(data_a, tmp_path):
    """Trainer.epoch_steps (the loop's records) under accumulation: one record per update. In a process
    of its own: the Trainer sets the device, which MindSpore allows only before any kernel ran."""
    import os
    import subprocess
    import sys

    s = spec(
        data_a,
        name="loop",
        data={"batch_size": 8, "val_split": 0},
        model={"freeze": "backbone"},
        train={"epochs": 1, "accumulate_steps": 2},
        amp={"level": "O0", "loss_scale": "none"},
    )
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "runner"))
    r = subprocess.run(
        [sys.executable, "-c", LOOP, json.dumps(s), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, PYTHONPATH=root),
    )
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["spe"] == (out["n"] // 8) // 2 and out["gb"] == 16
    recs = out["recs"]
    assert [r["step"] for r in recs] == list(range(1, out["spe"] + 1))
    assert all(np.isfinite(r["loss"]) and r["mean_loss"] == pytest.approx(r["loss"]) for r in recs)
    assert not any(r["skipped"] for r in recs) and out["applied"] == out["spe"]
