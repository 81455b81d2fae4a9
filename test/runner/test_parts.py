"""The runner's parts on their own: backbones, freezing, schedules, checkpoint retention."""
from __future__ import annotations

import json
import math
import os

import mindspore as ms
import numpy as np
import pytest
from conftest import ROOT, events, of_type, runner, spec, write_spec

from ascend_finetune.checkpoints import CheckpointStore, sha256_file
from ascend_finetune.model import TransferNet, apply_freeze, frozen_parts
from ascend_finetune.train import lr_per_step, resolve_target


@pytest.mark.parametrize("name,features,tensors", [("resnet18", 512, 100), ("resnet34", 512, 180),
                                                    ("resnet50", 2048, 265), ("resnet101", 2048, 520)])
def test_backbones_build_with_modelzoo_shapes(name, features, tensors):
    net = TransferNet(name, 7)
    assert net.backbone.num_features == features
    assert net.head.weight.shape == (7, features)
    assert len(list(net.backbone.get_parameters())) == tensors
    w = np.abs(net.head.weight.asnumpy())
    assert 0 < w.std() < 0.05, "head init Normal(0.02)"


def test_resnet18_forward_gives_class_logits():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        out = TransferNet("resnet18", 5)(ms.Tensor(np.zeros((2, 3, 32, 32), np.float32)))
    finally:
        ms.set_context(mode=ms.GRAPH_MODE)
    assert out.shape == (2, 5)


@pytest.mark.parametrize("freeze,frozen_prefixes", [
    ("none", []),
    ("backbone", ["conv1", "bn1", "layer1", "layer2", "layer3", "layer4"]),
    ("up_to:layer2", ["conv1", "bn1", "layer1", "layer2"]),
])
def test_freeze_modes_mark_exactly_their_parts(freeze, frozen_prefixes):
    net = TransferNet("resnet18", 3, frozen_parts(freeze))
    apply_freeze(net)
    for name, p in net.parameters_and_names():
        part = name.split(".")[1] if name.startswith("backbone.") else "head"
        if "moving_" in name:
            continue  # statistics are never trainable
        assert p.requires_grad == (part not in frozen_prefixes), name


def test_lr_schedules_with_warmup():
    t = {"lr": 0.1, "warmup_steps": 4, "lr_schedule": "constant", "lr_step_size": None, "lr_step_gamma": 0.1}
    assert lr_per_step(t, 8) == pytest.approx([0.025, 0.05, 0.075, 0.1, 0.1, 0.1, 0.1, 0.1])
    cos = lr_per_step({**t, "lr_schedule": "cosine", "warmup_steps": 0}, 10)
    assert cos[0] == pytest.approx(0.1) and cos[5] == pytest.approx(0.05) and cos[-1] < 0.003
    assert all(a >= b for a, b in zip(cos, cos[1:]))
    step = lr_per_step({**t, "lr_schedule": "step", "warmup_steps": 0, "lr_step_size": 3}, 7)
    assert step == pytest.approx([0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.001])


def test_device_auto_is_cpu_without_an_npu(monkeypatch, tmp_path):
    from ascend_finetune import train

    monkeypatch.setattr(train, "ASCEND_SIGNS", (str(tmp_path / "no-ascend-here"),))
    assert resolve_target("auto") == ("CPU", None)
    assert resolve_target("CPU") == ("CPU", None)
    # CANN installed but not usable (set_env.sh not sourced): CPU, with a warning that says so
    monkeypatch.setattr(train, "ASCEND_SIGNS", (str(tmp_path),))
    target, warning = resolve_target("auto")
    assert target == "CPU" and "set_env.sh" in warning


def test_keep_max_drops_the_oldest_but_never_the_best(tmp_path):
    net = ms.nn.Dense(4, 2)
    entries = [{"name": p.name, "data": p} for p in net.get_parameters()]
    store = CheckpointStore(str(tmp_path), "r/un x", "ckpt", keep_max=3, keep_best=True)
    accs = [0.9, 0.5, 0.6, 0.7, float("nan"), 0.8]  # the first is the best
    for i, acc in enumerate(accs, start=1):
        store.save(entries, epoch=i, step=i * 10, metrics={"val_acc": acc, "loss": acc})
    manifest = json.load(open(tmp_path / "checkpoints.json"))
    assert [e["step"] for e in manifest] == [10, 50, 60]
    assert [e["best"] for e in manifest] == [True, False, False]
    assert manifest[1]["metrics"]["val_acc"] is None, "NaN is written as null"
    on_disk = sorted(os.listdir(tmp_path / "checkpoints"))
    assert on_disk == sorted(os.path.basename(e["file"]) for e in manifest)
    assert all(f.startswith("r-un-x-") for f in on_disk), "names are file-system safe"
    for e in manifest:
        assert sha256_file(tmp_path / e["file"]) == e["sha256"]
    # a new best takes the flag, and the old best may then go
    store.save(entries, epoch=7, step=70, metrics={"val_acc": 0.95})
    store.save(entries, epoch=8, step=80, metrics={"val_acc": 0.1})
    manifest = json.load(open(tmp_path / "checkpoints.json"))
    assert [e["step"] for e in manifest] == [60, 70, 80] and [e["best"] for e in manifest] == [False, True, False]


def test_other_amp_levels_scalers_optimizers_and_safetensors(data_a, tmp_path):
    """O1 with a fixed loss scale, SGD, a cosine schedule after warm-up, safetensors checkpoints."""
    s = spec(data_a, name="o1", amp={"level": "O1", "loss_scale": "fixed", "init_scale": 128},
             train={"epochs": 1, "optimizer": "sgd", "lr": 0.02, "lr_schedule": "cosine", "warmup_steps": 3},
             checkpoint={"format": "safetensors"})
    code, out = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(tmp_path / "run"))
    assert code == 0, out
    evs = events(tmp_path / "run")
    started = of_type(evs, "run_started")[0]
    assert started["amp"] == {"level": "O1", "loss_scale": "fixed"}
    steps = of_type(evs, "step")
    assert all(st["loss_scale"] == 128 for st in steps), "a fixed scale never moves"
    expected = lr_per_step(started["spec"]["train"], started["total_steps"])
    applied = 0
    for st in steps:
        assert st["lr"] == pytest.approx(expected[applied])
        applied += not st["skipped"]
    ck = of_type(evs, "checkpoint")[-1]
    assert ck["file"].endswith(".safetensors")
    state = ms.load_checkpoint(str(tmp_path / "run" / ck["file"]), format="safetensors")
    assert int(state["step_num"].asnumpy()) == started["total_steps"]
    assert math.isfinite(steps[-1]["loss"])


def test_image_scan_is_cached_and_rechecks_changed_files(tmp_path, monkeypatch):
    from PIL import Image

    from ascend_finetune import data
    from ascend_finetune.demo_data import make_shapes

    monkeypatch.setenv("ASCEND_FINETUNE_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "set"
    make_shapes(str(root), per_class=5, size=32)
    decoded = []
    real = data._check_image
    monkeypatch.setattr(data, "_check_image", lambda p: decoded.append(p) or real(p))
    first = data.scan(str(root), 2)
    assert len(decoded) == 20 and len(first.samples) == 20
    decoded.clear()
    assert data.scan(str(root), 2).samples == first.samples
    assert decoded == [], "an unchanged set is not decoded again"
    victim = root / "red circle" / "0000.png"
    victim.write_bytes(victim.read_bytes()[:30])  # truncated since the last scan
    os.utime(victim, ns=(1, 1))
    third = data.scan(str(root), 2)
    assert decoded == [str(victim)]
    assert [p for p, _ in third.skipped] == [str(victim)] and len(third.samples) == 19
    Image.new("RGB", (32, 32)).save(victim)  # repaired
    assert len(data.scan(str(root), 2).samples) == 20


def test_keep_max_one_never_deletes_the_checkpoint_just_saved(tmp_path):
    net = ms.nn.Dense(4, 2)
    entries = [{"name": p.name, "data": p} for p in net.get_parameters()]
    store = CheckpointStore(str(tmp_path), "r", "ckpt", keep_max=1, keep_best=True)
    store.save(entries, epoch=1, step=10, metrics={"val_acc": 0.9})
    store.save(entries, epoch=1, step=15, metrics={"loss": 1.0, "reason": "stopped"})  # not better
    manifest = json.load(open(tmp_path / "checkpoints.json"))
    assert [e["step"] for e in manifest] == [10, 15], "the best stays and so does the newest"
    store.save(entries, epoch=2, step=20, metrics={"loss": 0.9})
    manifest = json.load(open(tmp_path / "checkpoints.json"))
    assert [e["step"] for e in manifest] == [10, 20]
    assert sorted(os.listdir(tmp_path / "checkpoints")) == ["r-e1-s10.ckpt", "r-e2-s20.ckpt"]
    store = CheckpointStore(str(tmp_path / "nobest"), "r", "ckpt", keep_max=2, keep_best=False)
    for step, acc in ((1, 0.9), (2, 0.1), (3, 0.2)):
        store.save(entries, epoch=1, step=step, metrics={"val_acc": acc})
    manifest = json.load(open(tmp_path / "nobest" / "checkpoints.json"))
    assert [(e["step"], e["best"]) for e in manifest] == [(2, False), (3, False)], "without keep_best, plain rotation"


def test_ls_passes_over_junk_and_reads_runs_from_their_tail(tmp_path):
    from ascend_finetune.events import EventLog
    from ascend_finetune.rundir import initial_status, list_runs

    root = tmp_path / "runs"
    run = root / "r1"
    run.mkdir(parents=True)
    (root / "README.txt").write_text("not a run")
    (root / "empty-dir").mkdir()
    initial_status(str(run), None)
    log = EventLog(str(run / "events.jsonl"))
    for i in range(1, 2001):
        log.emit("step", epoch=1, step=i, loss=1.0 / i)
    log.close()
    with open(run / "events.jsonl", "ab") as f:
        f.write(b"\x00\x00\x00\n")  # what a power loss can leave
    (run / "checkpoints.json").write_text(json.dumps([{"file": "checkpoints/a.ckpt", "epoch": 1, "step": 5,
                                                       "metrics": {"val_acc": 0.5}, "best": True}]))
    runs = list_runs(str(root))
    assert [r["run_id"] for r in runs] == ["r1"]
    assert runs[0]["step"] == 2000 and runs[0]["state"] == "running"  # launched, within the start-up grace
    assert runs[0]["best"]["file"] == "checkpoints/a.ckpt" and runs[0]["best"]["metrics"]["val_acc"] == 0.5
    code, out = runner("ls", str(root))
    assert code == 0 and len(out["runs"]) == 1


def test_nan_and_infinity_in_a_spec_are_refused(tmp_path, data_a):
    p = tmp_path / "nan.json"
    p.write_text('{"data": {"train": "%s", "val_split": NaN}}' % data_a)
    code, out = runner("validate", str(p))
    assert code == 2 and "NaN is not valid JSON" in out["problems"][0]["message"]
    from ascend_finetune.spec import check

    problems = check({"data": {"train": str(data_a)}, "train": {"lr": float("inf")}})
    assert [p.path for p in problems] == ["train.lr"]


def test_a_second_writer_on_a_run_directory_is_refused(tmp_path, data_a):
    from ascend_finetune.train import Run, RunBusy

    first = Run({"name": "x"}, str(tmp_path / "run"))
    with pytest.raises(RunBusy):
        Run({"name": "x"}, str(tmp_path / "run"))
    first._lock.close()
    Run({"name": "x"}, str(tmp_path / "run"))._lock.close()  # free again once the first is gone
    os.chdir(ROOT)


def test_lost_when_the_pid_belongs_to_another_process(tmp_path):
    from ascend_finetune.rundir import effective_state, process_start, write_status

    run = str(tmp_path / "run")
    os.makedirs(run)
    write_status(run, state="running", pid=os.getpid(), pid_start=process_start(os.getpid()), started_at=0)
    assert effective_state(run) == "running"
    write_status(run, pid_start=process_start(os.getpid()) - 1)  # same pid, another process's start
    assert effective_state(run) == "lost"
    write_status(run, pid=None, started_at=0)  # a launch that never started its process
    assert effective_state(run) == "lost"
