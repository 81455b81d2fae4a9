"""Train accuracy from the train step itself (step.train_acc) and host telemetry (`host` events), on
real short CPU runs: the accuracy is counted by the compiled step's own forward pass (no second
pass), per step, per accumulated update and per sink, and it agrees with a separate eval of the same
images; a machine without npu-smi writes the host's CPU, memory and the process's RSS instead."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from conftest import events, of_type, runner, spec, write_spec


def _train(tmp_path, name, s):
    path = write_spec(tmp_path / f"{name}.json", s)
    code, out = runner("train", str(path), "--run-dir", str(tmp_path / name), timeout=600)
    assert code == 0, out
    return events(tmp_path / name)


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory, data_a):
    """The demo shapes, resnet18 from scratch at O0, 4 epochs, host samples every 0.2 s."""
    if shutil.which("npu-smi"):
        pytest.skip("npu-smi is on the PATH: this machine writes device events, not host events")
    d = tmp_path_factory.mktemp("acc")
    s = spec(
        data_a,
        name="acc",
        train={"epochs": 4, "lr": 0.01},
        amp={"level": "O0", "loss_scale": "none"},
        device={"target": "CPU", "telemetry_s": 0.2},
    )
    return _train(d, "acc", s)


def test_every_step_reports_the_batchs_train_accuracy_and_it_rises_on_the_demo_data(demo_run):
    steps = of_type(demo_run, "step")
    batch = of_type(demo_run, "run_started")[0]["global_batch"]
    accs = [e["train_acc"] for e in steps]
    assert all(isinstance(a, float) and 0.0 <= a <= 1.0 for a in accs)
    # a count of the batch's images over the batch: whole images only
    assert all(abs(a * batch - round(a * batch)) < 1e-4 for a in accs), accs
    per_epoch = {}
    for e in steps:
        per_epoch.setdefault(e["epoch"], []).append(e["train_acc"])
    means = [sum(v) / len(v) for _, v in sorted(per_epoch.items())]
    assert means[-1] > means[0] + 0.15, f"train accuracy per epoch {means}: it should rise as the net learns"
    assert means[-1] > 1 / 3 + 0.15, "above chance (3 classes) by the last epoch"


def test_a_cpu_run_writes_host_telemetry_events(demo_run):
    hosts = of_type(demo_run, "host")
    assert len(hosts) >= 3, "a sample every 0.2 s over a run of several seconds"
    assert not of_type(demo_run, "device")
    seqs = [e["seq"] for e in demo_run]
    first_step = next(e["seq"] for e in demo_run if e["type"] == "step")
    assert any(e["seq"] > first_step for e in hosts) and seqs == sorted(seqs)
    for e in hosts:
        assert 0.0 <= e["cpu_pct"] <= 100.0
        assert 0 < e["mem_used_mb"] < e["mem_total_mb"]
        # MindSpore and a resnet18 in the training process: hundreds of MB, less than the machine
        assert 100 < e["rss_mb"] < e["mem_total_mb"]
        assert e["proc_cpu_pct"] >= 0.0
    # training keeps at least part of a core busy while it samples
    assert max(e["proc_cpu_pct"] for e in hosts) > 20.0


def test_train_accuracy_equals_an_eval_of_the_same_images(tmp_path):
    """A tiny fixed set, no augmentation, a frozen backbone and a learning rate too small to move
    the head: the last epoch's train accuracy (every image once, counted by the train step) equals
    the eval of the train set with the same weights, up to the eval's resize-and-crop."""
    from ascend_finetune.data.demo import make_shapes

    data = tmp_path / "tiny"
    make_shapes(str(data), per_class=16, size=32, seed=3)  # 48 images, batch 8: 6 steps, every image
    s = spec(
        data,
        name="same",
        data={"val_split": 0, "batch_size": 8, "augment": "none", "workers": 1},
        model={"freeze": "backbone"},
        train={"epochs": 2, "lr": 1e-12, "warmup_steps": 0},
        amp={"level": "O0", "loss_scale": "none"},
    )
    evs = _train(tmp_path, "same", s)
    last = [e for e in of_type(evs, "step") if e["epoch"] == 2]
    train_acc = sum(e["train_acc"] for e in last) / len(last)
    ckpt = [e for e in of_type(evs, "checkpoint")][-1]["file"]
    run_dir = os.path.join(tmp_path, "same")
    code, out = runner(
        "eval", "--run", run_dir, "--ckpt", os.path.join(run_dir, ckpt), "--data", str(data), timeout=600
    )
    assert code == 0, out
    assert isinstance(out, dict)
    assert abs(train_acc - out["accuracy"]) <= 0.07, (train_acc, out["accuracy"])


def test_train_accuracy_counts_all_micro_batches_of_an_accumulated_update(tmp_path, data_a):
    s = spec(
        data_a,
        name="accum",
        data={"batch_size": 8},
        train={"epochs": 1, "lr": 0.01, "accumulate_steps": 3},
        amp={"level": "O0", "loss_scale": "none"},
    )
    evs = _train(tmp_path, "accum", s)
    images = of_type(evs, "run_started")[0]["global_batch"]
    assert images == 24
    for e in of_type(evs, "step"):
        a = e["train_acc"]
        assert 0.0 <= a <= 1.0 and abs(a * images - round(a * images)) < 1e-4, a


def test_train_accuracy_uses_the_feature_cache_path(tmp_path, data_a):
    s = spec(
        data_a,
        name="cached",
        model={"freeze": "backbone"},
        train={"epochs": 2, "lr": 0.05, "cache_features": True},
        amp={"level": "O0", "loss_scale": "none"},
    )
    evs = _train(tmp_path, "cached", s)
    assert of_type(evs, "feature_cache")
    accs = [e["train_acc"] for e in of_type(evs, "step")]
    assert accs and all(0.0 <= a <= 1.0 for a in accs)
    assert json.dumps(accs)  # plain floats
