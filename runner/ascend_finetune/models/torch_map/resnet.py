"""torchvision's and timm's ResNet-18/34/50/101 onto the runner's own ResNets (models/net.py).

Both libraries share one naming scheme (`conv1`, `bn1`, `layerN.i.convK`, `layerN.i.bnK`,
`layerN.i.downsample.{0,1}`, `fc`) and one arithmetic: symmetric convolution padding, BatchNorm eps
1e-5, a max-pool padded by one pixel on every side, the stride on the bottleneck's 3x3 (v1.5). The
runner builds that as the "torch" layout (net.py); here only the names change.
"""

from __future__ import annotations

import re

from .common import COUNTER, NORM, strip

HEAD = re.compile(r"^fc\.(weight|bias)$")
_BN_NAME = re.compile(r"^(bn1|layer\d\.\d+\.bn\d|layer\d\.\d+\.downsample\.1)\.(weight|bias|running_mean|running_var)$")


def rename_one(name: str) -> str | None:
    """The runner's backbone name for a torchvision/timm ResNet tensor, or None for the head and counters."""
    name = strip(name)
    if HEAD.match(name) or COUNTER.search(name):
        return None
    m = _BN_NAME.match(name)
    if m:
        name = f"{m.group(1)}.{NORM[m.group(2)]}"
    return name.replace(".downsample.", ".down_sample_layer.")


def rename(names: list[str]) -> dict[str, str | None]:
    return {n: rename_one(n) for n in names}
