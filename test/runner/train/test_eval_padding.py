"""The in-run eval (Trainer.evaluate) on a validation set the batch size does not divide: the last
batch is padded to the batch size (the step sees one input shape, so it compiles once) and its
padding is masked out: every image counts once, and val_acc is the per-image accuracy."""

from __future__ import annotations

import json

from conftest import snippet

from ascend_finetune.data.demo import make_shapes

# In a process of its own, as the CLI runs the trainer (the device is set once per process).
EVAL = """
import json, sys
import numpy as np
from ascend_finetune.data.pipeline import make_dataset
from ascend_finetune.spec import resolve
from ascend_finetune.train.trainer import Trainer
tr = Trainer(resolve(json.loads(sys.argv[1])), sys.argv[2], [])
step, shapes = tr.eval_logits, []
def spy(x):
    shapes.append(list(x.shape))
    return step(x)
tr.eval_logits = spy
ev = tr.evaluate()
tr._set_train_mode(tr.net, False)
right = []
for path, label in tr.val_samples:  # image by image, outside the padded path
    ds = make_dataset([(path, label)], 32, 1, 1, False, False, 0, drop_remainder=False, on_device=True)
    for x, y in ds.create_tuple_iterator(num_epochs=1):
        right.append(int(step(x).asnumpy().argmax()) == label)
print(json.dumps({"ev": ev, "shapes": shapes, "right": right, "num_val": len(tr.val_samples)}))
"""


def test_in_run_eval_pads_the_last_batch_and_counts_every_image_once(tmp_path):
    data = tmp_path / "data"
    make_shapes(str(data), per_class=6, size=32, seed=9)  # 4 classes
    spec = {
        "name": "pad",
        "data": {"train": str(data), "image_size": 32, "batch_size": 8, "workers": 1, "val_split": 0.5},
        "model": {"backbone": "resnet18", "pretrained": None, "freeze": "backbone"},
        "train": {"epochs": 1, "lr": 0.01},
        "amp": {"level": "O0", "loss_scale": "none"},
        "device": {"target": "CPU"},
    }
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    out = snippet(EVAL, json.dumps(spec), str(run_dir), cwd=run_dir)
    ev, n = out["ev"], out["num_val"]
    assert n == 12 and n % 8  # 8 + 4: a partial last batch
    assert out["shapes"] == [[8, 3, 32, 32], [8, 3, 32, 32]]  # padded: one shape, one compile
    assert sum(map(sum, ev["confusion"])) == n
    assert ev["val_acc"] == sum(out["right"]) / n
    assert ev["val_top5"] == 1.0  # 4 classes
