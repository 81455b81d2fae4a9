"""mindcv backbones: a mindcv 0.3.0 model without its classifier, giving pooled features.

mindcv is imported here only, so a ResNet run needs nothing but MindSpore. The model is mindcv's own
(nothing patched): its `forward_features`, then its pooling where forward_features does not pool
(MobileNetV3's feature map: global average; ViT's tokens: the class token, or the mean of the patch
tokens and `fc_norm`, as its `global_pool` says). ConvNeXt and EfficientNet pool inside
forward_features. The classifier (and MobileNetV3's pre-logits Dense) is replaced by an Identity, so
its parameters are not in the network.

Built in the "torch" layout (for timm's state dicts), the same model computes with timm's arithmetic
where mindcv's differs (torch_map/arithmetic.py: padding, exact GELU, LayerNorm eps).

Parameter names are mindcv's under the TransferNet's `backbone.model.` (backbones.MINDCV_PREFIX), so
mindcv checkpoints load by name. Each model's parts (stem, stages, neck) come from backbones.json,
which `structure` below computed from the model (bench/backbone_survey.py writes it).
"""

from __future__ import annotations

import re
from typing import Any

from mindspore import nn

from .backbones import mindcv_models
from .torch_map.arithmetic import match_timm


def build_mindcv(name: str, **kwargs: Any) -> Any:
    """mindcv's model `name` with random weights (mindcv's own initialisation)."""
    import mindcv  # type: ignore[import-untyped]

    return mindcv.create_model(name, num_classes=1000, pretrained=False, **kwargs)


class MindcvBackbone(nn.Cell):
    """mindcv's `forward_features` and pooling; `num_features` wide. A model with a fixed input size
    (backbones.json `image_size`: ViT's position embedding) takes that size only: mindcv's
    dynamic_img_size resamples with an interpolation MindSpore 2.10 refuses (nearest with align_corners)."""

    def __init__(self, name: str, variant: str = "default"):
        super().__init__()
        if variant not in ("default", "torch"):
            raise ValueError(f"{name} is built in mindcv's layout or timm's (torch), not {variant!r}")
        entry = mindcv_models()[name]
        self.name_ = name
        self.variant = variant  # backbones.VARIANTS: mindcv's arithmetic, or timm's for PyTorch weights
        model = build_mindcv(name)
        if variant == "torch":
            match_timm(model, str(entry["family"]))
        for attr in entry["head"]:
            setattr(model, attr, nn.Identity())
        self.model = model
        self.pool = str(entry["pool"])  # "pooled" | "avg" | "token" | "avg_tokens"
        self.prefix_tokens = int(getattr(model, "num_prefix_tokens", 0))
        self.num_features = int(entry["num_features"])

    def construct(self, x: Any) -> Any:
        x = self.model.forward_features(x)
        if self.pool == "avg":
            x = x.mean((2, 3))
        elif self.pool == "token":
            x = self.model.fc_norm(x[:, 0])
        elif self.pool == "avg_tokens":
            x = self.model.fc_norm(x[:, self.prefix_tokens :].mean(1))
        return x


# -- structure: what backbones.json says of a model (used by the survey, not at run time) ----------


def _ordered_units(model: Any, container: str) -> list[str]:
    """The model's direct children in definition order, the container's children as `container.N`
    (with or without parameters: mindcv's feature_info counts activations too), then the model's own
    parameters (ViT's `cls_token`, `pos_embed`)."""
    units: list[str] = []
    for name, cell in model.name_cells().items():
        if name == container:
            units.extend(f"{name}.{child}" for child in cell.name_cells())
        else:
            units.append(name)
    units.extend(p.name for p in model.get_parameters(expand=False) if "." not in p.name)
    return units


def structure(model: Any, family: str) -> dict[str, Any]:
    """stem and stages (each a name and the backbone-relative paths it holds) of a mindcv model.

    Stages follow mindcv's own `feature_info` (the points its features_only mode returns), merged
    where the resolution does not change, each named by its last unit: ConvNeXt `feature.1..7`,
    MobileNetV3 and EfficientNet `features.N`. A first feature point at stride 2 is the stem's output
    (MobileNetV3's and EfficientNet's stem convolution); everything up to it is the stem. ViT has no
    feature_info: its blocks in four equal groups, each named by its last block; the stem is the patch
    embedding, class token and position embedding."""
    if family == "vit":
        depth = len(model.blocks)
        per = max(1, depth // 4)
        ends = list(range(per - 1, depth, per))
        ends[-1] = depth - 1
        stages, start = [], 0
        for end in ends:
            stages.append({"name": f"blocks.{end}", "paths": [f"blocks.{i}" for i in range(start, end + 1)]})
            start = end + 1
        stem = [
            u for u in _ordered_units(model, "blocks") if u in ("patch_embed", "cls_token", "pos_embed", "norm_pre")
        ]
        return {"stem": stem, "stages": stages}
    info = list(getattr(model, "feature_info", []) or [])
    if not info:
        raise ValueError(f"{type(model).__name__} has no feature_info: its stages are not known")
    container = info[0]["name"].rsplit(".", 1)[0] if re.search(r"\.\d+$", info[0]["name"]) else ""
    units = _ordered_units(model, container) if container else _ordered_units(model, "\0")
    groups: list[list[dict[str, Any]]] = []
    for e in info:
        if groups and groups[-1][-1]["reduction"] == e["reduction"]:
            groups[-1].append(e)
        else:
            groups.append([e])
    first = info[0]["name"]
    if info[0]["reduction"] <= 2:  # the stem's output (MobileNetV3, EfficientNet): its units are the stem
        stem = units[: units.index(first) + 1]
        groups[0] = groups[0][1:]
        groups = [g for g in groups if g]
    else:  # ConvNeXt: the units before the first stage (its patchify convolution)
        stem = units[: units.index(first)]
    stages, pos = [], len(stem)
    for g in groups:
        end = units.index(g[-1]["name"])
        stages.append({"name": g[-1]["name"], "paths": units[pos : end + 1]})
        pos = end + 1
    return {"stem": stem, "stages": stages}
