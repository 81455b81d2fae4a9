"""The MindSpore input pipeline over scanned ImageFolder samples (folder.py): decode, augment, normalise, batch.

Decoding happens in MindSpore's C++ ops; folder.scan has already checked with Pillow that every file decodes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


class _FileSource:
    """Random-access source of (encoded bytes, label): decoding happens in MindSpore's C++ ops."""

    def __init__(self, samples: list[tuple[str, int]]):
        self.samples = samples

    def __getitem__(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        path, label = self.samples[i]
        return np.fromfile(path, dtype=np.uint8), np.array(label, dtype=np.int32)

    def __len__(self) -> int:
        return len(self.samples)


def make_dataset(
    samples: list[tuple[str, int]],
    image_size: int,
    batch_size: int,
    workers: int,
    train: bool,
    augment: bool,
    seed: int,
    drop_remainder: bool,
    num_shards: int | None = None,
    shard_id: int | None = None,
    shuffle: bool | None = None,
) -> Any:
    """With num_shards (data parallel), this rank's part of the seeded shuffle: every rank shuffles
    with the same seed and takes its own shard, so the ranks see disjoint images each epoch."""
    import mindspore.dataset as ds
    import mindspore.dataset.vision as vision

    ds.config.set_seed(seed)
    # `shuffle` defaults to `train`; the feature cache wants augmented views in sample order.
    dataset = ds.GeneratorDataset(
        _FileSource(samples),
        column_names=["image", "label"],
        shuffle=train if shuffle is None else shuffle,
        num_parallel_workers=1,
        num_shards=num_shards,
        shard_id=shard_id,
    )
    if train and augment:
        ops = [
            vision.RandomCropDecodeResize(image_size, scale=(0.08, 1.0), ratio=(0.75, 1.333)),
            vision.RandomHorizontalFlip(prob=0.5),
        ]
    else:
        ops = [vision.Decode(), vision.Resize(int(round(image_size * 256 / 224))), vision.CenterCrop(image_size)]
    ops += [vision.Normalize(mean=MEAN, std=STD), vision.HWC2CHW()]
    dataset = dataset.map(operations=ops, input_columns="image", num_parallel_workers=workers)
    return dataset.batch(batch_size, drop_remainder=drop_remainder)
