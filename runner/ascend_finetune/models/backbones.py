"""Backbone names and their shapes; no MindSpore import, so spec validation starts fast."""

BACKBONES = {
    # name: (block, blocks per stage)
    "resnet18": ("basic", (2, 2, 2, 2)),
    "resnet34": ("basic", (3, 4, 6, 3)),
    "resnet50": ("bottleneck", (3, 4, 6, 3)),
    "resnet101": ("bottleneck", (3, 4, 23, 3)),
}
STAGES = ("layer1", "layer2", "layer3", "layer4")
