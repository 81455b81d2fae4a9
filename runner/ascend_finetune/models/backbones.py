"""Backbone names and their parts; no MindSpore import, so spec validation starts fast.

Two kinds of backbone:
- the runner's own ResNets (models/net.py), which need nothing but MindSpore;
- mindcv 0.3.0 models (models/mindcv_net.py), imported only when a run uses one. Which ones are
  offered, and their parts, come from `backbones.json` beside the spec schema, written by
  bench/backbone_survey.py from the models themselves (only families that build, train in GRAPH mode
  on CPU and export MindIR are there; the survey's verdict on the others is in docs/weights.md).

A backbone is a sequence of parts, from the input: the stem, the stages, and (mindcv) the neck, the
parameters after the last stage (ConvNeXt's final norm, ViT's norm). `model.freeze` freezes a leading
run of them: `up_to:<stage>` the stem and the stages up to that one, `backbone` all of them.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Any

BACKBONES = {
    # name: (block, blocks per stage)
    "resnet18": ("basic", (2, 2, 2, 2)),
    "resnet34": ("basic", (3, 4, 6, 3)),
    "resnet50": ("bottleneck", (3, 4, 6, 3)),
    "resnet101": ("bottleneck", (3, 4, 23, 3)),
}
STAGES = ("layer1", "layer2", "layer3", "layer4")  # the runner's ResNets' stages

# Layout variants of the same backbone (same parameter names and shapes, different arithmetic). A
# checkpoint only reproduces its features in the layout it was trained in (models/net.py):
# - "default": symmetric padding, BatchNorm eps 1e-5, max-pool "same": the runner's own, and mindcv's;
# - "modelzoo": MindSpore ModelZoo's official/cv/ResNet/src/resnet.py;
# - "torch": torchvision's and timm's ResNet (symmetric padding, eps 1e-5, max-pool padded by one
#   pixel on every side: PyTorch's MaxPool2d(3, 2, padding=1)), for PyTorch state dicts.
VARIANTS = ("default", "modelzoo", "torch")
# Checkpoints record their variant as an integer entry (names and counters are what a .ckpt keeps
# reliably, in both formats); the manifest names it in words.
VARIANT_ENTRY = "backbone_variant"
VARIANT_CODES = {"default": 0, "modelzoo": 1, "torch": 2}
CATALOG_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "backbones.json")
MINDCV_VERSION = "0.3.0"
# A mindcv model's parameters in a TransferNet and its checkpoints: `backbone.model.<mindcv's name>`.
MINDCV_PREFIX = "backbone.model."


def variant_of_code(code: int) -> str:
    for name, c in VARIANT_CODES.items():
        if c == int(code):
            return name
    raise ValueError(f"unknown {VARIANT_ENTRY} {code} (known: {VARIANT_CODES})")


@lru_cache(maxsize=1)
def catalog() -> dict[str, Any]:
    """backbones.json: `backbones` (the offered mindcv models and their parts), `families` (the survey)."""
    with open(CATALOG_FILE, encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


def mindcv_models() -> dict[str, dict[str, Any]]:
    return dict(catalog()["backbones"])


def is_mindcv(name: str) -> bool:
    return name not in BACKBONES and name in mindcv_models()


def all_names() -> list[str]:
    return [*BACKBONES, *mindcv_models()]


def family(name: str) -> str:
    return "resnet" if name in BACKBONES else str(mindcv_models()[name]["family"])


def fixed_image_size(name: str) -> int | None:
    """The one image size a backbone takes (a ViT's fixed position embedding), or None for any."""
    size = mindcv_models().get(name, {}).get("image_size")
    return int(size) if size else None


def stages_of(name: str) -> tuple[str, ...]:
    """The stage names `up_to:` takes for this backbone."""
    if name in BACKBONES:
        return STAGES
    return tuple(s["name"] for s in mindcv_models()[name]["stages"])


def freeze_values(name: str) -> list[str]:
    return ["none", "backbone", *(f"up_to:{s}" for s in stages_of(name))]


def parts_of(name: str) -> list[tuple[str, tuple[str, ...]]]:
    """(part, backbone-relative cell or parameter paths) from the input: stem, stages, and for mindcv
    the neck. The neck's paths are empty: it is every backbone parameter the other parts do not hold."""
    if name in BACKBONES:
        return [("stem", ("conv1", "bn1")), *((s, (s,)) for s in STAGES)]
    m = mindcv_models()[name]
    return [
        ("stem", tuple(m["stem"])),
        *((s["name"], tuple(s["paths"])) for s in m["stages"]),
        ("neck", ()),
    ]


def frozen_parts(freeze: str, name: str = "resnet50") -> int:
    """How many leading parts (parts_of) a `model.freeze` value freezes; ValueError for a stage this
    backbone does not have."""
    if freeze == "none":
        return 0
    if freeze == "backbone":
        return len(parts_of(name))
    stage = freeze.split(":", 1)[1] if freeze.startswith("up_to:") else freeze
    stages = stages_of(name)
    if stage not in stages:
        raise ValueError(f"{name} has no stage {stage!r} (its stages: {', '.join(stages)})")
    return 1 + stages.index(stage) + 1


def under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p + ".") for p in prefixes)


def part_index(name: str, param: str) -> int:
    """The index in parts_of(name) of a backbone-relative parameter name."""
    parts = parts_of(name)
    for i, (_, paths) in enumerate(parts):
        if paths and under(param, paths):
            return i
    # ResNet: nothing outside its parts; mindcv: the neck, the last part
    return len(parts) - 1


def frozen_param(name: str, param: str, freeze: str) -> bool:
    """Whether the backbone-relative parameter `param` is frozen under `freeze`."""
    return part_index(name, param) < frozen_parts(freeze, name)
