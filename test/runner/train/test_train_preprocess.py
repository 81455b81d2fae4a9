"""data.augment "none" trains on the images the run evaluates on: the weights' resize, interpolation and
crop (model.preprocess), not the runner's own round(size * 256 / 224) bilinear resize. Before, training
took the runner's while the eval and the feature cache took the weights': other pixels (with `squash`,
another aspect ratio) in training than in validation, and with cache_features on than off."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from conftest import snippet
from PIL import Image

# In a process of its own, as the CLI runs the trainer (the device is set once per process).
PIXELS = """
import json, sys
import numpy as np
from ascend_finetune.data.pipeline import make_dataset
from ascend_finetune.spec import resolve
from ascend_finetune.train.trainer import Trainer
tr = Trainer(resolve(json.loads(sys.argv[1])), sys.argv[2], [])
sample = tr.train_samples[0]
tr.train_samples = [sample] * tr.spec["data"]["batch_size"]  # one image, whatever the shuffle
first = lambda ds: next(ds.create_tuple_iterator(num_epochs=1, output_numpy=True))[0]
train = first(tr._epoch_dataset(1, True))  # the training batches, as the device queue gets them
val = first(tr._eval_dataset([sample]))[0]  # the in-run eval's
own = first(make_dataset([sample], 32, 1, 1, False, False, 0, drop_remainder=False, on_device=True))[0]
print(json.dumps({
    "train_is_val": [bool(np.array_equal(x, val)) for x in train],
    "shape": list(val.shape),
    "own_differs": not np.array_equal(own, val),
    "preprocess": tr.preprocess.describe(),
}))
"""


def _wide_images(root, per_class=6):
    """Two classes of 48x32 images with detail everywhere, so any other resize or crop shows."""
    rng = np.random.default_rng(4)
    for c in ("a", "b"):
        os.makedirs(root / c)
        for i in range(per_class):
            img = rng.integers(0, 256, (32, 48, 3), dtype=np.uint8)
            img[:, :, 0] = np.linspace(0, 255, 48, dtype=np.uint8)[None, :]
            Image.fromarray(img).save(root / c / f"{i}.png")


@pytest.mark.parametrize(
    "preprocess",
    [
        "timm",  # bicubic, crop 0.95, floor(size / crop): Pillow's resize (augment.PIL_RECIPES)
        {"crop_pct": 1.0, "interpolation": "bicubic", "crop_mode": "squash"},  # MindSpore's ops, both sides
    ],
)
def test_augment_none_trains_on_the_images_the_run_evaluates_on(tmp_path, preprocess):
    data = tmp_path / "data"
    _wide_images(data)
    spec = {
        "name": "pre",
        "data": {
            "train": str(data),
            "image_size": 32,
            "batch_size": 4,
            "workers": 1,
            "val_split": 0.2,
            "augment": "none",
        },
        "model": {"backbone": "resnet18", "pretrained": None, "freeze": "none", "preprocess": preprocess},
        "train": {"epochs": 1},
        "amp": {"level": "O0", "loss_scale": "none"},
        "device": {"target": "CPU"},
    }
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    out = snippet(PIXELS, json.dumps(spec), str(run_dir), cwd=run_dir)
    assert out["shape"] == [3, 32, 32]
    # The weights' settings are not the runner's own here: the check below could tell them apart.
    assert out["own_differs"], out["preprocess"]
    assert out["train_is_val"] == [True] * 4, out["preprocess"]
