"""The trainer's step loop (Trainer.epoch_steps): per-step records on CPU, the sink's inputs for
Ascend, the stop flag in the step's own AllReduce, and the data-bound warning."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import snippet

from ascend_finetune.device.backend import sink_size_for
from ascend_finetune.train.steps import build_sink


def test_sink_size_divides_the_epoch_part():
    assert sink_size_for(100, 1) == 1
    assert sink_size_for(100, 8) == 5  # 20 sinks of 5, not 12 of 8 and a torn one
    assert sink_size_for(96, 8) == 8
    assert sink_size_for(3, 8) == 3
    assert sink_size_for(7, 4) == 1


def test_build_sink_hands_the_step_and_dataset_to_data_sink():
    """Ascend only: data_sink itself raises on CPU; here its inputs are checked."""
    import mindspore as ms

    seen = {}

    def fake_sink(fn, dataset, sink_size, jit_config):
        seen.update(fn=fn, dataset=dataset, sink_size=sink_size, jit_config=jit_config)
        return lambda: "sunk"

    step, ds = object(), object()
    assert build_sink(step, ds, 8, data_sink=fake_sink)() == "sunk"
    assert seen["fn"] is step and seen["dataset"] is ds and seen["sink_size"] == 8
    assert isinstance(seen["jit_config"], ms.JitConfig)  # one compiled graph, not PyNative per step
    with pytest.raises(ValueError, match="ascend or gpu"):
        build_sink(
            lambda x, y: x,
            ms.dataset.NumpySlicesDataset({"x": np.ones((2, 1), np.float32)}),
            2,
        )


def test_stop_flag_rides_in_the_steps_loss_all_reduce():
    """StepStop replaces the step's loss AllReduce by one over [loss, wish]: the agreed flag comes
    back in the same graph call as the loss (an identity stands in for AllReduce on one process)."""
    import mindspore as ms
    from mindspore import nn

    from ascend_finetune.distributed.strategy import StepStop
    from ascend_finetune.models.amp import build_train_step
    from ascend_finetune.train.steps import run_step_cell

    class Same(nn.Cell):
        def construct(self, x):
            return x

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_seed(0)
    net = nn.Dense(4, 3)
    core = build_train_step(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.1), None)
    core.distributed, core.ranks, core.grad_reducer = True, 1, Same()
    stop = StepStop(core, reduce=Same())
    step = run_step_cell(core, stop)
    x, y = ms.Tensor(np.ones((2, 4), np.float32)), ms.Tensor(np.array([0, 1], np.int32))
    out = step(x, y).asnumpy()
    assert out[4] == 0.0 and np.isfinite(out[0])
    stop.want(True)
    out = step(x, y).asnumpy()
    assert out[4] == 1.0  # agreed in the step itself: no second graph, no second device read
    stop.want(False)
    assert step(x, y).asnumpy()[4] == 0.0


def _jpegs(root, n_per_class, size, seed):
    """Smooth JPEGs (upscaled noise): small files whose decode time grows with `size` squared."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    for c in ("a", "b", "c"):
        os.makedirs(os.path.join(root, c), exist_ok=True)
        for i in range(n_per_class):
            px = rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)
            Image.fromarray(px).resize((size, size), Image.BILINEAR).save(os.path.join(root, c, f"{i}.jpg"), quality=90)


def _spec(train_dir, workers, name, prefetch=None):
    return {
        "name": name,
        "data": {
            "train": str(train_dir),
            "image_size": 32,
            "batch_size": 8,
            "workers": workers,
            "val_split": 0,
            "prefetch": prefetch,
        },
        "model": {"backbone": "resnet18", "pretrained": None, "freeze": "backbone"},
        "train": {"epochs": 1, "lr": 0.01},
        "amp": {"level": "O0", "loss_scale": "none"},
        "device": {"target": "CPU"},
    }


# In a process of its own with oneDNN capped at AVX2, as the CLI runs: in this process oneDNN may
# have picked its reference convolutions (bench/onednn_isa.py), whose steps would hide any pipeline.
EPOCH = """
import json, sys, time
from ascend_finetune.data import pipeline
from ascend_finetune.spec import resolve
from ascend_finetune.train.trainer import Trainer
spec, run_dir, read_s, stop_at = json.loads(sys.argv[1]), sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
if read_s:  # a slow disk (a network filesystem, say): each file takes read_s to arrive
    get = pipeline._FileSource.__getitem__
    pipeline._FileSource.__getitem__ = lambda self, i: (time.sleep(read_s), get(self, i))[1]
tr = Trainer(resolve(spec), run_dir, [])
calls = []
def wants_stop():  # the inbox or a signal: a stop wanted from the stop_at-th call on
    calls.append(1)
    return 0 < stop_at <= len(calls)
recs = list(tr.epoch_steps(1, 0, wants_stop))
print(json.dumps({"steps_per_epoch": tr.steps_per_epoch, "step": tr.step, "recs": recs}))
"""


def _epoch(tmp_path, train_dir, workers, name, prefetch=None, read_s=0.0, stop_at=0):
    import json

    run_dir = tmp_path / name
    run_dir.mkdir()
    spec = json.dumps(_spec(train_dir, workers, name, prefetch))
    return snippet(EPOCH, spec, str(run_dir), str(read_s), str(stop_at), cwd=run_dir)


def test_slow_pipeline_gets_one_data_bound_warning_and_a_fast_one_none(tmp_path):
    slow_dir, fast_dir = tmp_path / "big", tmp_path / "small"
    # 1 worker, 320 px JPEGs for a 32 px net, read from a slow disk (60 ms a file), short queues
    # (data.prefetch 2): the batches read while the step compiles run out within the 21 steps.
    # (Decoding alone cannot starve the step on this 2-core machine: the decode thread takes
    # the compute's cores, so the step slows instead of waiting.)
    _jpegs(str(slow_dir), 56, 320, 1)
    _jpegs(str(fast_dir), 56, 32, 2)
    slow = _epoch(tmp_path, slow_dir, 1, "slow", prefetch=2, read_s=0.06)
    recs = slow["recs"]
    assert [r["step"] for r in recs] == list(range(1, slow["steps_per_epoch"] + 1))
    assert all(r["data_ms"] is not None and r["first_step"] == r["step"] for r in recs)
    warned = [r["warning"] for r in recs if r["warning"]]
    assert len(warned) == 1 and warned[0]["code"] == "data_bound", [(r["step_ms"], r["data_ms"]) for r in recs]
    assert "data.workers" in warned[0]["message"] and warned[0]["details"]["share"] > 0.25
    recs = _epoch(tmp_path, fast_dir, 2, "fast", prefetch=2)["recs"]
    assert not [r for r in recs if r["warning"]], [(r["step_ms"], r["data_ms"]) for r in recs]
    # One record per step on CPU, the loop's own values: mean_loss of one step is its loss.
    assert all(r["mean_loss"] == r["loss"] and r["nonfinite"] == 0 and not r["skipped"] for r in recs)


def test_stop_is_read_between_calls(tmp_path):
    d = tmp_path / "d"
    _jpegs(str(d), 40, 32, 3)
    doc = _epoch(tmp_path, d, 2, "stop", stop_at=3)
    # One process: a stop wanted before the third call ends the epoch there, without that call.
    assert [r["step"] for r in doc["recs"]] == [1, 2] and doc["step"] == 2


RUN = """
import json, sys, time
from ascend_finetune.data import pipeline
from ascend_finetune.events import read_events
from ascend_finetune.spec import resolve
from ascend_finetune.train.run import Run
spec, run_dir, read_s = json.loads(sys.argv[1]), sys.argv[2], float(sys.argv[3])
get = pipeline._FileSource.__getitem__
pipeline._FileSource.__getitem__ = lambda self, i: (time.sleep(read_s), get(self, i))[1]
code = Run(resolve(spec), run_dir).execute()
print(json.dumps({"code": code, "events": read_events(run_dir + "/events.jsonl")}))
"""


def test_the_run_loop_writes_the_data_bound_warning_after_the_steps_that_showed_it(tmp_path):
    """The whole run (train/run.py's loop over Trainer.epoch_steps), slow disk as above."""
    import json

    slow_dir = tmp_path / "big"
    _jpegs(str(slow_dir), 56, 320, 1)
    run_dir = tmp_path / "run"
    spec = _spec(slow_dir, 1, "slow-run", prefetch=2)
    doc = snippet(RUN, json.dumps(spec), str(run_dir), "0.06", cwd=tmp_path, timeout=600)
    assert doc["code"] == 0
    evs = doc["events"]
    bound = [i for i, e in enumerate(evs) if e["type"] == "warning" and e["code"] == "data_bound"]
    assert len(bound) == 1, [(e["step_ms"], e["data_ms"]) for e in evs if e["type"] == "step"]
    assert evs[bound[0] - 1]["type"] == "step", "written right after the step whose window showed it"
    assert all("data_ms" in e and "first_step" not in e for e in evs if e["type"] == "step")
