"""Per-part learning rates: the optimizer's parameter groups for `train.backbone_lr_mult` and
`train.layer_decay`.

The parts of a ResNet, from the input: the stem (conv1, bn1), layer1..layer4, the head. With layer-wise
decay `d`, the head keeps the base rate and each part below it gets one more factor `d` (layer4 `d`,
layer3 `d^2`, ..., the stem `d^5`), the BEiT/timm rule `d^(depth - i)` with a stage as one layer. The
backbone's parts are also multiplied by `backbone_lr_mult`. MindSpore's optimizers take a group's rate
as a dict's 'lr' (a float, or a Tensor of one rate per step: the schedule, scaled).
"""

from __future__ import annotations

from typing import Any

from ..models.backbones import STAGES, part_index, parts_of
from ..spec_types import TrainSpec

PARTS = ("stem", *STAGES, "head")  # a ResNet's; other backbones: parts_for


def parts_for(backbone: str) -> tuple[str, ...]:
    """The parts of `backbone` (models/backbones.py parts_of: stem, stages, a mindcv neck) and the head."""
    return (*(name for name, _ in parts_of(backbone)), "head")


def part_of(name: str, backbone: str = "resnet50") -> str:
    """The part a parameter belongs to, by its name (`backbone.layer2.0.conv1.weight` is layer2)."""
    bits = name.split(".", 1)
    if bits[0] == "head":
        return "head"
    if bits[0] == "backbone" and len(bits) > 1:
        return parts_of(backbone)[part_index(backbone, bits[1])][0]
    return "stem"


def part_scales(backbone_lr_mult: float, layer_decay: float, backbone: str = "resnet50") -> dict[str, float]:
    """Each part's factor on the base learning rate."""
    parts = parts_for(backbone)
    depth = len(parts) - 1
    return {p: (1.0 if p == "head" else backbone_lr_mult) * layer_decay ** (depth - i) for i, p in enumerate(parts)}


def scaled(t: TrainSpec) -> bool:
    """Whether the spec asks for per-part rates at all (otherwise one group, as before)."""
    return float(t.get("backbone_lr_mult", 1.0)) != 1.0 or float(t.get("layer_decay", 1.0)) != 1.0


def groups(params: list[Any], t: TrainSpec, lr: Any, backbone: str = "resnet50") -> list[dict[str, Any]]:
    """`params` (the trainable ones) in one group per part, each with its scaled copy of `lr` (a float
    or a Tensor schedule), in the parts' order; parts with nothing trainable are left out."""
    scales = part_scales(float(t["backbone_lr_mult"]), float(t["layer_decay"]), backbone)
    by_part: dict[str, list[Any]] = {p: [] for p in parts_for(backbone)}
    for p in params:
        by_part[part_of(p.name, backbone)].append(p)
    out = [{"params": ps, "lr": lr * scales[part] if scales[part] != 1.0 else lr} for part, ps in by_part.items() if ps]
    # order_params keeps the update order (and the optimizer's state order) that of the network
    return [*out, {"order_params": params}]


def build_optimizer(t: TrainSpec, trainable: list[Any], lrs: list[float], backbone: str = "resnet50") -> Any:
    """`train.optimizer` over the trainable parameters, the learning rate per update `lrs` (a constant
    without schedule or warm-up), one group per part when per-part rates are asked for."""
    import mindspore as ms
    import numpy as np
    from mindspore import nn

    params: Any = list(trainable)
    lr: Any = (
        ms.Tensor(np.array(lrs, np.float32)) if t["lr_schedule"] != "constant" or t["warmup_steps"] else float(t["lr"])
    )
    if scaled(t):  # backbone_lr_mult, layer_decay: one group per part
        params = groups(params, t, lr, backbone)
    if t["optimizer"] == "momentum":
        return nn.Momentum(params, lr, t["momentum"], weight_decay=t["weight_decay"])
    if t["optimizer"] == "sgd":
        return nn.SGD(params, lr, momentum=0.0, weight_decay=t["weight_decay"])
    return nn.AdamWeightDecay(params, lr, weight_decay=t["weight_decay"])
