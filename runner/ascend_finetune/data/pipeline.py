"""The MindSpore input pipeline over scanned ImageFolder samples (folder.py): decode and augment, then
normalise (on the host, or in the graph on the device), batch.

Decoding happens in MindSpore's C++ ops; folder.scan has already checked with Pillow that every file decodes.

`on_device=True` (the trainer's choice) feeds uint8 CHW batches and leaves the float32 normalisation
to `DeviceNormalize` inside the compiled step: a quarter of the bytes through the host-to-device copy
(and, on Ascend, through the device queue), and the same float32 values, bit for bit, as
`vision.Normalize` on the host (test/runner/data/test_pipeline.py).

The mean and std are the weights' (models/preprocess.py's Preprocess), for training and evaluation alike;
without one, ImageNet's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import augment as augment_ops

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


def normalize_workers(workers: int) -> int:
    """Threads of the host normalisation map: a quarter of the decode/augment threads (it is a
    fraction of their work: one pass over the decoded pixels)."""
    return max(1, workers // 4)


def make_dataset(
    samples: list[tuple[str, int]],
    image_size: int,
    batch_size: int,
    workers: int,
    train: bool,
    augment: bool | str,
    seed: int,
    drop_remainder: bool,
    num_shards: int | None = None,
    shard_id: int | None = None,
    shuffle: bool | None = None,
    on_device: bool = False,
    prefetch: int | None = None,
    mix: tuple[float, float] | None = None,
    num_classes: int = 0,
    preprocess: Any = None,
    mean_std: tuple[Any, Any] | None = None,
) -> Any:
    """With num_shards (data parallel), this rank's part of the seeded shuffle: every rank shuffles
    with the same seed and takes its own shard, so the ranks see disjoint images each epoch.

    Two maps: decode/augment with `workers` threads, then normalise (on the host: float32 CHW; with
    `on_device`: only the uint8 HWC to CHW transpose, and the step normalises with DeviceNormalize).
    `prefetch`: rows each op's output queue holds (MindSpore's `config.set_prefetch_size`, a
    process-wide setting; None leaves it as it is).

    Training only: `augment` is a `data.augment` preset (True/False: basic/none), `mix` the
    (`data.mixup`, `data.cutmix`) alphas, which turn the labels into soft rows over `num_classes`
    (augment.py). Evaluation (`train=False`) always gets the plain resize and centre crop:
    the runner's own, or `preprocess` (models/preprocess.py's Preprocess): the resize and interpolation of
    the weights' recipe. The host normalisation uses `mean_std` (0..255 units), else `preprocess`'s,
    else ImageNet's."""
    import mindspore.dataset as ds
    import mindspore.dataset.vision as vision

    ds.config.set_seed(seed)
    if prefetch:
        ds.config.set_prefetch_size(int(prefetch))
    # `shuffle` defaults to `train`; the feature cache wants augmented views in sample order.
    dataset = ds.GeneratorDataset(
        _FileSource(samples),
        column_names=["image", "label"],
        shuffle=train if shuffle is None else shuffle,
        num_parallel_workers=1,
        num_shards=num_shards,
        shard_id=shard_id,
    )
    ops = (
        augment_ops.image_ops(augment, image_size, preprocess)
        if train
        else augment_ops.eval_ops(image_size, preprocess)
    )
    dataset = dataset.map(operations=ops, input_columns="image", num_parallel_workers=workers)
    mean, std = mean_std or ((preprocess.mean, preprocess.std) if preprocess is not None else (MEAN, STD))
    norm = vision.Normalize(mean=[float(x) for x in mean], std=[float(x) for x in std])
    last = [vision.HWC2CHW()] if on_device else [norm, vision.HWC2CHW()]
    dataset = dataset.map(operations=last, input_columns="image", num_parallel_workers=normalize_workers(workers))
    dataset = dataset.batch(batch_size, drop_remainder=drop_remainder)
    if train and mix and augment_ops.mixes(*mix):
        dataset = augment_ops.mix_batches(dataset, num_classes, *mix)
    return dataset


def device_normalize(mean: Any = MEAN, std: Any = STD) -> Any:
    """The graph half of `on_device`: a Cell taking a uint8 NCHW batch to the float32 that
    `vision.Normalize` gives on the host, with the same operations in the same order ((x - mean) / std
    in float32; a multiplication by 1/std would differ in the last bit). mean/std in 0..255 units."""
    import mindspore as ms
    from mindspore import nn

    class DeviceNormalize(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.mean = ms.Tensor(np.array(mean, np.float32).reshape(1, 3, 1, 1))
            self.std = ms.Tensor(np.array(std, np.float32).reshape(1, 3, 1, 1))

        def construct(self, x: Any) -> Any:
            return (x.astype(ms.float32) - self.mean) / self.std

    return DeviceNormalize()
