"""Training augmentation: the `data.augment` presets and the batch mixing of `data.mixup` /
`data.cutmix`, all with MindSpore's own `mindspore.dataset.vision` ops. Evaluation and prediction
never come here (pipeline.make_dataset applies these to training batches only).

Presets, applied to the decoded HWC uint8 image:
- none: the eval transform, the weights' own resize and crop as evaluation uses it (the runner's own:
  resize to size*256/224, centre crop);
- basic: random resized crop (scale 0.08-1, ratio 3/4-4/3) and a horizontal flip (the recipe's);
- randaugment / trivialaugment / autoaugment: basic, then `vision.RandAugment` (2 ops, magnitude 9),
  `vision.TrivialAugmentWide` or `vision.AutoAugment` (ImageNet policy): timm's order (crop, flip,
  then the policy), MindSpore's default arguments otherwise.

Mixing happens on whole batches: the labels become one-hot float32 rows (`transforms.OneHot`), then
`vision.MixUpBatch(alpha)` or `vision.CutMixBatch(alpha)` mixes images and label rows alike; with
both set, each batch gets one of the two (`transforms.RandomChoice`, timm's switch probability 0.5).
The loss takes the rows as class probabilities (nn.CrossEntropyLoss accepts both kinds of target).
Images fed uint8 to the device are mixed in uint8, so a mixed pixel is rounded (< 1/255 off the
label's weight); the label rows are exact and sum to 1.
"""

from __future__ import annotations

from typing import Any

PRESETS = ("none", "basic", "randaugment", "trivialaugment", "autoaugment")


def preset_of(augment: bool | str) -> str:
    """`data.augment`'s preset; booleans (the pipeline's older callers) mean basic or none."""
    if isinstance(augment, bool):
        return "basic" if augment else "none"
    if augment not in PRESETS:
        raise ValueError(f"unknown augmentation preset {augment!r}: one of {', '.join(PRESETS)}")
    return augment


def eval_ops(image_size: int, preprocess: Any = None) -> list[Any]:
    """Decode, resize, centre crop: the runner's own (resize to size*256/224, bilinear) or the
    weights' (`preprocess`: models/preprocess.py's Preprocess, from `model.preprocess`)."""
    import mindspore.dataset.vision as vision

    if preprocess is None:
        return [vision.Decode(), vision.Resize(int(round(image_size * 256 / 224))), vision.CenterCrop(image_size)]
    side = preprocess.resize(image_size)
    # timm's crop_mode "squash": both sides to the resize, the aspect ratio not kept
    size = (side, side) if getattr(preprocess, "crop_mode", "center") == "squash" else side
    if preprocess.name in PIL_RECIPES:
        # timm and torchvision decode and resize with Pillow (antialiased) and round the crop's offset;
        # MindSpore's own ops (OpenCV kernels, no antialias, offset floored) are up to 69 of 255 off
        # theirs. Pillow through MindSpore's Python ops gives their pixels (test_preprocess_timm.py).
        inter = vision.Inter.BICUBIC if preprocess.interpolation == "bicubic" else vision.Inter.BILINEAR
        return [vision.Decode(to_pil=True), vision.Resize(size, inter), vision.ToNumpy(), TorchCenterCrop(image_size)]
    # mindcv's and ModelZoo's recipes are MindSpore's own ops: the same here.
    inter = vision.Inter.BICUBIC if preprocess.interpolation == "bicubic" else vision.Inter.LINEAR
    return [vision.Decode(), vision.Resize(size, interpolation=inter), vision.CenterCrop(image_size)]


PIL_RECIPES = ("timm", "torchvision")  # models/preprocess.py's presets whose reference resizes with Pillow


class TorchCenterCrop:
    """torchvision.transforms.functional.center_crop on an HWC array: offset int(round(margin / 2))
    (Python's round, half to even); the resize has made both sides at least `size`."""

    def __init__(self, size: int):
        self.size = size

    def __call__(self, img: Any) -> Any:
        h, w = img.shape[:2]
        top, left = int(round((h - self.size) / 2.0)), int(round((w - self.size) / 2.0))
        return img[top : top + self.size, left : left + self.size].copy()


def image_ops(augment: bool | str, image_size: int, preprocess: Any = None) -> list[Any]:
    """The per-image ops (encoded bytes in, HWC uint8 out) of a training preset."""
    import mindspore.dataset.vision as vision

    preset = preset_of(augment)
    if preset == "none":
        return eval_ops(image_size, preprocess)
    ops = [
        vision.RandomCropDecodeResize(image_size, scale=(0.08, 1.0), ratio=(0.75, 1.333)),
        vision.RandomHorizontalFlip(prob=0.5),
    ]
    if preset == "randaugment":
        ops.append(vision.RandAugment(num_ops=2, magnitude=9))
    elif preset == "trivialaugment":
        ops.append(vision.TrivialAugmentWide())
    elif preset == "autoaugment":
        ops.append(vision.AutoAugment(vision.AutoAugmentPolicy.IMAGENET))
    return ops


def mixes(mixup: float, cutmix: float) -> bool:
    return mixup > 0 or cutmix > 0


def mix_batches(dataset: Any, num_classes: int, mixup: float, cutmix: float) -> Any:
    """Batched (NCHW image, int label) in; the same with mixed images and soft float32 label rows out."""
    import mindspore as ms
    import mindspore.dataset.transforms as transforms
    import mindspore.dataset.vision as vision

    dataset = dataset.map(
        operations=[transforms.OneHot(num_classes), transforms.TypeCast(ms.float32)], input_columns="label"
    )
    ops = []
    if mixup > 0:
        ops.append(vision.MixUpBatch(alpha=float(mixup)))
    if cutmix > 0:
        ops.append(vision.CutMixBatch(vision.ImageBatchFormat.NCHW, alpha=float(cutmix), prob=1.0))
    op = ops[0] if len(ops) == 1 else transforms.RandomChoice(ops)
    return dataset.map(operations=op, input_columns=["image", "label"])
