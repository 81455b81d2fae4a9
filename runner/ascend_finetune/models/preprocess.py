"""Which evaluation preprocessing pretrained weights expect: `model.preprocess`.

A network sees its best features on inputs prepared as in its own training recipe; the recipes differ
in the resize before the centre crop and its interpolation, not in the normalisation (every source
here uses ImageNet's mean and std). The table, each row from the source's own definition:

- `imagenet`: bilinear, crop 0.875, resize to round(size * 256 / 224). The runner's own pipeline (what its
  checkpoints trained with); also ModelZoo ResNet's eval (Resize(256), CenterCrop(224)).
- `mindcv`: bilinear, crop 0.875, resize to floor(size / crop). mindcv 0.3.0 data/transforms_factory.py
  transforms_imagenet_eval's defaults, data/constants.py DEFAULT_CROP_PCT.
- `torchvision`: bilinear, crop 0.875, floor(size / crop). torchvision's ResNet *_Weights.IMAGENET1K_V1:
  ImageClassification(crop_size=224) with resize_size=256, bilinear.
- `timm`: bicubic, crop 0.95, floor(size / crop). timm models/resnet.py `_rcfg` (the a1/a2/a3 tags, which
  resnetN's default tags are), timm data/transforms_factory.py's floor(size / crop_pct).

`auto` picks from where the weights come from: `mindcv:` names -> mindcv, `hf-hub:timm/...` -> timm,
a MindSpore file (ModelZoo, mindcv, the runner's) or none -> imagenet. A PyTorch state dict cannot tell
timm's recipe from torchvision's: auto takes torchvision's and says so in a warning.

Augmented training crops (RandomCropDecodeResize) are not changed by the preset.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

# ImageNet's mean and std in 0..255 pixel units: torchvision's transforms._presets.ImageClassification
# and timm's data/constants.py IMAGENET_DEFAULT_MEAN/STD (0..1 units), mindcv's data/constants.py.
MEAN = (0.485 * 255, 0.456 * 255, 0.406 * 255)
STD = (0.229 * 255, 0.224 * 255, 0.225 * 255)
PRESETS = ("auto", "imagenet", "mindcv", "torchvision", "timm")


@dataclass(frozen=True)
class Preprocess:
    name: str
    interpolation: str  # "bilinear" | "bicubic"
    crop_pct: float
    rounding: str  # "round256": round(size * 256 / 224), the runner's own; "floor": floor(size / crop_pct)
    mean: tuple[float, float, float] = MEAN
    std: tuple[float, float, float] = STD
    why: str = ""  # how `auto` chose it

    def resize(self, image_size: int) -> int:
        """The shorter side to resize to before the centre crop of `image_size`."""
        if self.rounding == "round256":
            return int(round(image_size * 256 / 224))
        return int(math.floor(image_size / self.crop_pct))

    def describe(self) -> dict[str, object]:
        """run_started's and the checkpoint manifest's `preprocess`."""
        d = asdict(self)
        d["mean"], d["std"] = list(self.mean), list(self.std)
        return d


TABLE = {
    "imagenet": Preprocess("imagenet", "bilinear", 0.875, "round256"),
    "mindcv": Preprocess("mindcv", "bilinear", 0.875, "floor"),
    "torchvision": Preprocess("torchvision", "bilinear", 0.875, "floor"),
    "timm": Preprocess("timm", "bicubic", 0.95, "floor"),
}
TORCH_AMBIGUOUS = (
    "a PyTorch state dict cannot say whether it is torchvision's or timm's: evaluation preprocessing "
    'follows torchvision\'s (bilinear, crop 0.875); set model.preprocess to "timm" for timm weights '
    "(bicubic, crop 0.95)"
)


def choose(setting: str, pretrained: str | None, origin: str | None) -> tuple[Preprocess, str | None]:
    """(preset, warning or None) for `model.preprocess` = setting, given model.pretrained as written
    and the weights' origin (pretrained.origin_of_file: runner, modelzoo, mindcv, torch, unknown)."""
    from dataclasses import replace

    if setting != "auto":
        return replace(TABLE[setting], why="model.preprocess"), None
    if pretrained and pretrained.startswith("mindcv:"):
        return replace(TABLE["mindcv"], why="mindcv: weights"), None
    if pretrained and pretrained.startswith("hf-hub:timm/"):
        return replace(TABLE["timm"], why="timm weights from the hub"), None
    if origin == "torch":
        return replace(TABLE["torchvision"], why="PyTorch state dict (torchvision assumed)"), TORCH_AMBIGUOUS
    return replace(TABLE["imagenet"], why="MindSpore weights" if pretrained else "no pretrained weights"), None


def from_record(record: object) -> Preprocess | None:
    """The preset a manifest entry or run_started recorded, if it is one we know."""
    if isinstance(record, dict) and record.get("name") in TABLE:
        return TABLE[str(record["name"])]
    return None
