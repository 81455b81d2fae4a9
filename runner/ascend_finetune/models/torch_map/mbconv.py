"""timm's MobileNetV3 and EfficientNet state dicts onto mindcv's models of the same name.

Both timm models are built from timm's `_efficientnet_blocks`: a stem (`conv_stem`, `bn1`), then
`blocks.<stage>.<block>` of three kinds, told apart by their tensors:
- `ds` (depthwise-separable, no expansion): conv_dw, bn1, [se], conv_pw, bn2;
- `ir` (inverted residual): conv_pw, bn1, conv_dw, bn2, [se], conv_pwl, bn3;
- `cn` (conv + norm, MobileNetV3's last 1x1): conv, bn1.
mindcv builds each block as one SequentialCell in the same order, its activations in between taking
an index each: `ir` is [conv, bn, act, conv_dw, bn, act, (se), conv, bn], `ds` [conv_dw, bn, act,
(se), conv, bn]. mindcv's stem is `features.0/1/2` (conv, BN, activation); then
- MobileNetV3: every block in a row, `features.<3+n>.layers.<i>`, the `cn` block's conv and BN as
  `features.<3+n>`, `features.<4+n>`;
- EfficientNet: a SequentialCell per stage, `features.<3+stage>.<block>.block.<i>`, then timm's
  `conv_head`/`bn2` as the next two `features`.
The head: timm's `classifier` and, in MobileNetV3, `conv_head` (timm's pre-logits 1x1 conv, which
the runner's backbone leaves out as it leaves out mindcv's pre-logits Dense).
"""

from __future__ import annotations

import re

from .common import COUNTER, norm, strip

MOBILENETV3_HEAD = re.compile(r"^(conv_head|classifier)\.")
EFFICIENTNET_HEAD = re.compile(r"^classifier\.")
_BLOCK = re.compile(r"^blocks\.(\d+)\.(\d+)\.(.+)$")
_NORMS = ("bn1", "bn2", "bn3")


def _kinds(names: list[str]) -> dict[tuple[int, int], tuple[str, bool]]:
    """(stage, block) -> (kind, has SE) from the tensors each block holds."""
    modules: dict[tuple[int, int], set[str]] = {}
    for n in names:
        m = _BLOCK.match(n)
        if m:
            modules.setdefault((int(m.group(1)), int(m.group(2))), set()).add(m.group(3).split(".")[0])
    kinds = {}
    for key, mods in modules.items():
        kind = "ir" if "conv_pwl" in mods else "ds" if "conv_dw" in mods else "cn"
        kinds[key] = (kind, "se" in mods)
    return kinds


def _index(kind: str, se: bool, module: str) -> int | None:
    """The index in mindcv's block SequentialCell of timm's module `module`."""
    s = int(se)
    if kind == "ir":
        order = {"conv_pw": 0, "bn1": 1, "conv_dw": 3, "bn2": 4, "se": 6, "conv_pwl": 6 + s, "bn3": 7 + s}
    else:
        order = {"conv_dw": 0, "bn1": 1, "se": 3, "conv_pw": 3 + s, "bn2": 4 + s}
    return order.get(module)


def _tensor(path: str, module: str, rest: str) -> str | None:
    """`path.rest` for a conv or SE tensor, MindSpore's norm names for a BatchNorm's."""
    if module in _NORMS:
        return norm(path, rest)
    return f"{path}.{rest}"


def _rename(names: list[str], family: str) -> dict[str, str | None]:
    stripped = {n: strip(n) for n in names}
    kinds = _kinds(list(stripped.values()))
    order = sorted(kinds)
    row = {key: i for i, key in enumerate(order)}  # MobileNetV3: blocks in a row
    stages = sorted({s for s, _ in order})
    head = MOBILENETV3_HEAD if family == "mobilenetv3" else EFFICIENTNET_HEAD
    out: dict[str, str | None] = {}
    for orig, name in stripped.items():
        if head.match(name) or COUNTER.search(name):
            out[orig] = None
            continue
        module, _, rest = name.partition(".")
        if module == "conv_stem":
            out[orig] = f"features.0.{rest}"
        elif module == "bn1":
            out[orig] = norm("features.1", rest)
        elif family == "efficientnet" and module in ("conv_head", "bn2"):
            at = 3 + len(stages) + (module == "bn2")
            out[orig] = _tensor(f"features.{at}", module, rest)
        elif m := _BLOCK.match(name):
            stage, block, tail = int(m.group(1)), int(m.group(2)), m.group(3)
            sub, _, rest = tail.partition(".")
            kind, se = kinds[(stage, block)]
            if kind == "cn":  # MobileNetV3's last conv + BN, straight in `features`
                at = 3 + row[(stage, block)] + (sub == "bn1")
                out[orig] = _tensor(f"features.{at}", sub, rest) if sub in ("conv", "bn1") else name
                continue
            i = _index(kind, se, sub)
            if i is None:  # a module mindcv's block does not have: left as is, reported unexpected
                out[orig] = name
                continue
            cell = (
                f"features.{3 + row[(stage, block)]}.layers.{i}"
                if family == "mobilenetv3"
                else f"features.{3 + stage}.{block}.block.{i}"
            )
            out[orig] = _tensor(cell, sub, rest)
        else:
            out[orig] = name
    return out


def rename_mobilenetv3(names: list[str]) -> dict[str, str | None]:
    return _rename(names, "mobilenetv3")


def rename_efficientnet(names: list[str]) -> dict[str, str | None]:
    return _rename(names, "efficientnet")
