"""timm's ConvNeXt state dicts onto mindcv's ConvNeXt.

timm: `stem.{0,1}` (patchify conv, LayerNorm2d), `stages.<i>.downsample.{0,1}` (LayerNorm2d, conv;
stages 1-3), `stages.<i>.blocks.<j>.{conv_dw, norm, mlp.fc1, mlp.fc2, gamma}`, `head.norm`, `head.fc`.
mindcv keeps one SequentialCell `feature` of stem, stage, downsample, stage, ...: stem `feature.0`,
stage i's blocks `feature.<2i+1>.<j>`, its downsample `feature.<2i>`; a block's `dwconv`, `norm`,
`pwconv1`, `pwconv2` and layer scale `gamma_`; the final `norm`. LayerNorm weight/bias are gamma/beta.
The head is timm's `head.fc`.
"""

from __future__ import annotations

import re

from .common import norm, strip

HEAD = re.compile(r"^head\.fc\.")
_BLOCK = re.compile(r"^stages\.(\d+)\.blocks\.(\d+)\.(.+)$")
_DOWN = re.compile(r"^stages\.(\d+)\.downsample\.([01])\.(\w+)$")
_STEM = re.compile(r"^stem\.([01])\.(\w+)$")
_IN_BLOCK = {"conv_dw": "dwconv", "mlp.fc1": "pwconv1", "mlp.fc2": "pwconv2"}


def rename_one(name: str) -> str | None:
    name = strip(name)
    if HEAD.match(name):
        return None
    if m := _STEM.match(name):
        path = f"feature.0.{m.group(1)}"
        return norm(path, m.group(2)) if m.group(1) == "1" else f"{path}.{m.group(2)}"
    if m := _DOWN.match(name):
        path = f"feature.{2 * int(m.group(1))}.{m.group(2)}"
        return norm(path, m.group(3)) if m.group(2) == "0" else f"{path}.{m.group(3)}"
    if m := _BLOCK.match(name):
        path = f"feature.{2 * int(m.group(1)) + 1}.{m.group(2)}"
        tail = m.group(3)
        if tail == "gamma":
            return f"{path}.gamma_"
        module, _, tensor = tail.rpartition(".")
        if module == "norm":
            return norm(f"{path}.norm", tensor)
        return f"{path}.{_IN_BLOCK.get(module, module)}.{tensor}"
    if name.startswith("head.norm."):
        return norm("norm", name.rsplit(".", 1)[1])
    return name


def rename(names: list[str]) -> dict[str, str | None]:
    return {n: rename_one(n) for n in names}
