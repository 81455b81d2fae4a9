"""Renaming PyTorch state dicts onto the runner's backbones, one module per family.

No MindSpore and no torch here (catalog.py and `validate` import the table below): each family module
maps names only. What renaming cannot fix (timm's padding, GELU and LayerNorm eps differ from
mindcv's) is built by arithmetic.py in the backbone's "torch" layout.

- resnet: torchvision's and timm's ResNet-18/34/50/101 onto the runner's own ResNets;
- mbconv: timm's MobileNetV3 and EfficientNet (timm's `_efficientnet_blocks`) onto mindcv's models;
- convnext, vit: timm's ConvNeXt and ViT onto mindcv's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from . import convnext, mbconv, resnet, vit
from .common import strip

# timm's architecture name (a hub repository `timm/<name>.<tag>` says it before the dot) -> the
# runner's backbone its state dict loads into. Each pair is checked against timm itself
# (test/runner/models/test_timm_mindcv.py); nothing else is offered.
TIMM_MODELS = {
    "resnet18": "resnet18",
    "resnet34": "resnet34",
    "resnet50": "resnet50",
    "resnet101": "resnet101",
    "mobilenetv3_small_100": "mobilenet_v3_small_100",
    "mobilenetv3_large_100": "mobilenet_v3_large_100",
    "efficientnet_b0": "efficientnet_b0",
    "efficientnet_b1": "efficientnet_b1",
    "convnext_tiny": "convnext_tiny",
    "convnext_small": "convnext_small",
    "vit_base_patch32_224": "vit_b_32_224",
    "vit_base_patch16_224": "vit_b_16_224",
}

T = TypeVar("T")
# family (backbones.family) -> (names -> {name: backbone name, or None when not loaded}, head pattern)
Renamer = Callable[[list[str]], dict[str, str | None]]
FAMILIES: dict[str, tuple[Renamer, re.Pattern[str]]] = {
    "resnet": (resnet.rename, resnet.HEAD),
    "mobilenetv3": (mbconv.rename_mobilenetv3, mbconv.MOBILENETV3_HEAD),
    "efficientnet": (mbconv.rename_efficientnet, mbconv.EFFICIENTNET_HEAD),
    "convnext": (convnext.rename, convnext.HEAD),
    "vit": (vit.rename, vit.HEAD),
}


def timm_backbone(arch: str) -> str | None:
    """The backbone a timm architecture's weights load into, or None when it is not supported."""
    return TIMM_MODELS.get(arch)


def convert(family: str, state: dict[str, T]) -> tuple[dict[str, T], list[str], list[str]]:
    """(backbone name -> tensor, head entries dropped, other entries dropped) for a PyTorch state dict
    of `family`: the head is timm's/torchvision's classifier (and MobileNetV3's pre-logits conv),
    the others are counters (`num_batches_tracked`)."""
    rename, head_re = FAMILIES[family]
    names = rename(list(state))
    out: dict[str, T] = {}
    head: list[str] = []
    dropped: list[str] = []
    for name, value in state.items():
        mapped = names[name]
        if mapped is None:
            (head if head_re.match(strip(name)) else dropped).append(name)
        else:
            out[mapped] = value
    return out, sorted(head), sorted(dropped)
