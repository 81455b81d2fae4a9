"""Backbone names and their shapes; no MindSpore import, so spec validation starts fast."""

BACKBONES = {
    # name: (block, blocks per stage)
    "resnet18": ("basic", (2, 2, 2, 2)),
    "resnet34": ("basic", (3, 4, 6, 3)),
    "resnet50": ("bottleneck", (3, 4, 6, 3)),
    "resnet101": ("bottleneck", (3, 4, 23, 3)),
}
STAGES = ("layer1", "layer2", "layer3", "layer4")

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


def variant_of_code(code: int) -> str:
    for name, c in VARIANT_CODES.items():
        if c == int(code):
            return name
    raise ValueError(f"unknown {VARIANT_ENTRY} {code} (known: {VARIANT_CODES})")
