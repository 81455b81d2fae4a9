"""mindcv backbones: a mindcv 0.3.0 model without its classifier, giving pooled features.

mindcv is imported here only, so a ResNet run needs nothing but MindSpore. The model is mindcv's own
(nothing patched): its `forward_features`, then its pooling where forward_features does not pool
(MobileNetV3's feature map: global average; ViT's tokens: the class token, or the mean of the patch
tokens and `fc_norm`, as its `global_pool` says; PiT's: its class token, normed already). ConvNeXt and
EfficientNet pool inside forward_features. A model without a `forward_features` that returns one tensor
(DPN, HaloNet, HRNet's list of maps, ...) runs its own `construct` instead (backbones.json `call:
"construct"`), whose classifier is an Identity here: the output is what its classifier would have seen,
pooled the same way. The classifier (and MobileNetV3's pre-logits Dense) is replaced by an Identity, so
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

from mindspore import nn, ops

from .backbones import mindcv_models
from .torch_map.arithmetic import match_timm

_NORMS = (nn.LayerNorm, nn.BatchNorm1d, nn.BatchNorm2d, nn.GroupNorm)


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
        # mindcv's files name each tensor by its Parameter.name as create_model leaves it, which for
        # some models (EdgeNeXt's CellLists: `0.0.weight`) is not the cell path; assigning the model
        # below renames them to the path, so keep the unique ones here for load_backbone.
        bare: dict[str, list[str]] = {}
        for path, p in model.parameters_and_names():
            if p.name != path:
                bare.setdefault(p.name, []).append(path)
        self.published_names_ = {n: paths[0] for n, paths in bare.items() if len(paths) == 1}
        if variant == "torch":
            match_timm(model, str(entry["family"]))
        for attr in entry["head"]:
            setattr(model, attr, nn.Identity())
        self.model = model
        self.pool = str(entry["pool"])  # "pooled" | "avg" | "token" | "avg_tokens" | "class_token" | "concat"
        self.call_construct = entry.get("call") == "construct"
        self.prefix_tokens = int(getattr(model, "num_prefix_tokens", 0))
        self.num_features = int(entry["num_features"])

    def construct(self, x: Any) -> Any:
        x = self.model(x) if self.call_construct else self.model.forward_features(x)
        if self.pool == "avg":
            x = x.mean((2, 3))
        elif self.pool == "token":
            x = self.model.fc_norm(x[:, 0])
        elif self.pool == "avg_tokens":
            x = self.model.fc_norm(x[:, self.prefix_tokens :].mean(1))
        elif self.pool == "class_token":  # PiT: the class token, which forward_features has normed
            x = x[:, 0]
        elif self.pool == "concat":  # CrossViT: its branches' class tokens, side by side
            x = ops.concat(x, 1)
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
    return units + _own_parameters(model)


def constants(model: Any) -> list[str]:
    """The model's constants: Parameters mindcv builds with requires_grad=False (Swin's attention masks
    and relative-position indices, SwinV2's coordinate tables), by path; backbones.json `constants`,
    which inspect leaves out of what trains. BatchNorm's moving statistics are not constants: training
    updates them."""
    stats = (".moving_mean", ".moving_variance")
    return [n for n, p in model.parameters_and_names() if not p.requires_grad and not n.endswith(stats)]


def _own_parameters(model: Any) -> list[str]:
    """The model's own parameters, not its cells': ViT's `cls_token`, CrossViT's tuple `cls_token.0`."""
    cells = model.name_cells()
    return [p.name for p in model.get_parameters(expand=False) if p.name.split(".")[0] not in cells]


def structure(model: Any, family: str, features: Any = None, size: int = 64) -> dict[str, Any]:
    """stem and stages (each a name and the backbone-relative paths it holds) of a mindcv model.

    Stages follow mindcv's own `feature_info` (the points its features_only mode returns), merged
    where the resolution does not change, each named by its last unit: ConvNeXt `feature.1..7`,
    MobileNetV3 and EfficientNet `features.N`. A first feature point at stride 2 is the stem's output
    (MobileNetV3's and EfficientNet's stem convolution); everything up to it is the stem. ViT has no
    feature_info: its blocks in four equal groups, each named by its last block; the stem is the patch
    embedding, class token and position embedding. HRNet has no feature_info either, and its stages
    run parallel branches at several resolutions at once, which no probe of one resolution per unit
    orders: its own four stages, each with the transition that opens its branches (stem stride 4:
    conv1, conv2 and their norms). A model with none of these: probed (`_probed`), with `features(x)`
    the model's features of an image batch at `size` px."""
    if family == "vit" or type(model).__name__ == "VisionTransformer":  # MAE's fine-tuned model is one
        depth = len(model.blocks)
        per = max(1, depth // 4)
        ends = list(range(per - 1, depth, per))
        ends[-1] = depth - 1
        stages, start = [], 0
        for end in ends:
            stages.append({"name": f"blocks.{end}", "paths": [f"blocks.{i}" for i in range(start, end + 1)]})
            start = end + 1
        stem = [  # CrossViT (a VisionTransformer too) keeps a class token and position embedding per branch
            u
            for u in _ordered_units(model, "blocks")
            if u.split(".")[0] in ("patch_embed", "cls_token", "pos_embed", "norm_pre")
        ]
        return {"stem": stem, "stages": stages}
    if family == "hrnet":  # the incre and downsample modules and final_layer that merge the branches: the neck
        return {
            "stem": ["conv1", "bn1", "conv2", "bn2", "relu"],
            "stages": [{"name": "layer1", "paths": ["layer1"]}]
            + [{"name": f"stage{i}", "paths": [f"transition{i - 1}", f"stage{i}"]} for i in (2, 3, 4)],
        }
    info = list(getattr(model, "feature_info", []) or [])
    if not info:
        if features is None:
            raise ValueError(f"{type(model).__name__} has no feature_info: its stages are not known")
        return _probed(model, features, size)
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


def _run_units(model: Any, features: Any, size: int) -> list[tuple[str, int, bool]]:
    """(unit, output side, has parameters) in execution order, from one PyNative forward with hooks.
    The units are the model's direct children; one that does not run as one cell (a CellList the
    model loops over) is replaced by its children (recursively), and so is a direct SequentialCell or
    CellList child whose children's outputs are at more than one resolution (a `features` container
    spanning stages; one level only). A cell that never runs holds no unit. The
    side is a map's height or the square root of a token count (a class token left over); a pooled
    output keeps the side before. A cell that returns maps at several resolutions at once (HRNet's
    parallel branches) has no place in a sequence of stages: ValueError."""
    import math

    import numpy as np
    from mindspore import Tensor

    seen: dict[str, int | None] = {}

    def hook(path: str) -> Any:
        def record(_cell: Any, _inputs: Any, out: Any) -> None:
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            sides = {tuple(o.shape)[2] for o in outs if len(tuple(getattr(o, "shape", ()))) == 4}
            if len(sides) > 1:
                raise ValueError(f"{path} gives maps at {len(sides)} resolutions at once (parallel branches)")
            shape = tuple(getattr(outs[0], "shape", ())) if outs else ()
            side = shape[2] if len(shape) == 4 else math.isqrt(shape[1]) if len(shape) == 3 else None
            seen.setdefault(path, side)  # a cell run twice counts where it first ran

        return record

    cells = dict(model.cells_and_names())
    handles = [cell.register_forward_hook(hook(path)) for path, cell in cells.items() if path]
    try:
        features(Tensor(np.zeros((1, 3, size, size), np.float32)))
    finally:
        for h in handles:
            h.remove()

    def units(path: str) -> list[str]:
        cell = cells[path]
        subs = [f"{path}.{k}" for k in cell.name_cells()]
        spans = "." not in path and isinstance(cell, (nn.SequentialCell, nn.CellList))
        if path in seen and not (spans and len({seen.get(u) for u in subs} - {None}) > 1):
            return [path]
        return [u for sub in subs for u in units(sub)]  # not run as one cell, or spans stages

    order = list(seen)  # insertion order: the order the cells finished
    found = sorted((u for top in model.name_cells() for u in units(top)), key=order.index)
    out, side = [], size
    for u in found:
        side = seen[u] or side
        out.append((u, side, any(True for _ in cells[u].get_parameters())))
    return out


def _probed(model: Any, features: Any, size: int) -> dict[str, Any]:
    """Stages of a model without feature_info, by one rule: its units (`_run_units`) in execution
    order, in runs at the same output resolution. Each run is a stage named by its last unit with
    parameters; parameterless units at a new resolution (a pooling, a padding) join the next run, or
    the last one at the end. The stem is the first run (the layers
    at the stem's stride), or only the first unit when that already reduces by 4 or more (a patchify
    embedding; the rest of its run is the first stage); the model's own parameters (class token,
    position embedding) go with the stem. A final norm layer, and parameters outside the units (a
    cell the features do not run), are the neck. A model at one resolution throughout (fewer than 3
    runs) has its longest run cut in four equal groups of units (of a lone container's children), as
    ViT's blocks."""
    cells = dict(model.cells_and_names())
    runs: list[list[tuple[str, int, bool]]] = []
    for u in _run_units(model, features, size):
        if runs and (u[1] == runs[-1][-1][1] or not any(has for _, _, has in runs[-1])):
            runs[-1].append(u)
        else:
            runs.append([u])
    merged: list[list[tuple[str, int, bool]]] = []
    for r in runs:
        if merged and not any(has for _, _, has in r):
            merged[-1].extend(r)
        else:
            merged.append(r)
    last = merged[-1]  # a final norm (DenseNet's norm5, PoolFormer's norm) is the neck, as ConvNeXt's
    while len(last) > 1 and isinstance(cells.get(last[-1][0]), _NORMS + (nn.Identity, nn.ReLU)):
        last.pop()
    first = merged[0]
    if first[0][1] * 4 <= size and len(first) > 1:
        stem, merged[0] = [first[0]], first[1:]
        # What is left of the stem's run may be parameterless (Swin's position dropout before its first
        # stage, which downsamples at its end): it joins the next run, as a pooling at a new resolution does.
        if len(merged) > 1 and not any(has for _, _, has in merged[0]):
            merged[1] = merged[0] + merged[1]
            merged.pop(0)
    else:
        stem = merged.pop(0)
    own = _own_parameters(model)
    stages = [{"name": [n for n, _, has in r if has][-1], "paths": [n for n, _, _ in r]} for r in merged]
    if len(stages) < 3:  # one resolution throughout (CaiT, XCiT, MLP-Mixer): its longest run in four
        at = max(range(len(stages)), key=lambda i: len(stages[i]["paths"]))
        paths = stages[at]["paths"]
        if len(paths) == 1:  # one container of blocks run as one cell (MLP-Mixer's mixer_blocks): its blocks
            paths = [f"{paths[0]}.{k}" for k in cells[paths[0]].name_cells()] or paths
        per = max(1, len(paths) // 4)
        cuts = [0, per, 2 * per, 3 * per, len(paths)] if len(paths) >= 4 else [0, len(paths)]
        stages[at : at + 1] = [{"name": paths[b - 1], "paths": paths[a:b]} for a, b in zip(cuts, cuts[1:])]
    return {"stem": [n for n, _, _ in stem] + own, "stages": stages}
