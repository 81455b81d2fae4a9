"""Reference side of test_torch_weights.py and test_timm_mindcv.py: runs in .venv-ref (torch,
torchvision, timm, safetensors), never in the runner's venv.

For each `source:arch[@size]` argument it builds the reference library's own model with random
weights, moves every norm's statistics and affine, every bias and ConvNeXt's layer scale away from
their initial values (so a mapping that swaps or drops one shows in the features), saves its state
dict as `<source>-<arch>.safetensors` and `.pth`, and its pooled features (the input of its head,
eval mode) on a fixed input of `size` px (default SIZE) as `<source>-<arch>.features.npy`. Each
size's input goes to `input-<size>.npy` (the default size's also to `input.npy`).

usage: python torch_ref.py OUT_DIR SIZE [--pth=arch,...] source:arch[@size]...
(--pth: write `.pth` files for those architectures only; by default for all)
       python torch_ref.py --pretrain IMAGE_FOLDER OUT.safetensors
The second form trains torchvision's resnet18 in PyTorch on an image folder (one sub-folder per
class, 32 px images), so the transfer test starts from weights that learned something.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import safetensors.torch
import timm
import torch
import torchvision


def build(source: str, arch: str) -> torch.nn.Module:
    if source == "torchvision":
        return getattr(torchvision.models, arch)(weights=None)
    if source == "timm":
        return timm.create_model(arch, pretrained=False)
    raise SystemExit(f"unknown source {source}")


def perturb(model: torch.nn.Module, gen: torch.Generator, calibrate: torch.Tensor | None = None) -> None:
    """Weights a mapping error shows in: norm affines and statistics away from their initial 1/0,
    biases away from 0 and ConvNeXt's layer scale away from 1e-6. A mapping that swaps mean and
    variance, or gamma and beta, or drops a tensor, then changes the features.

    BatchNorm statistics: for the ResNets random ones with gamma scaled by sqrt(var) (as
    test_origins.py does), so 16-33 residual blocks keep pooled features of order 1; with `calibrate`
    (MobileNetV3, EfficientNet, whose blocks mostly have no shortcut) measured on that batch, so every
    BatchNorm really normalises and the input still shapes the features after 15-50 layers, as in a
    trained network (with random statistics the signal fades and a wrong early layer would not show)."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    for m in model.modules():
        if isinstance(m, torch.nn.LayerNorm):
            n = m.weight.shape
            m.weight.data = 0.5 + torch.rand(n, generator=gen)
            m.bias.data = 0.2 * torch.randn(n, generator=gen)
        elif isinstance(m, (torch.nn.Linear, torch.nn.Conv2d)) and m.bias is not None:
            m.bias.data = m.bias.data + 0.05 * torch.randn(m.bias.shape, generator=gen)
    for name, p in model.named_parameters():
        if name.endswith(".gamma"):  # ConvNeXt's layer scale: blocks that contribute, not 1e-6 of them
            p.data = 0.2 + 0.3 * torch.rand(p.shape, generator=gen)
    if calibrate is None:
        for m in bns:
            n = m.num_features
            var = 0.5 + 1.5 * torch.rand(n, generator=gen)
            m.running_mean.data = 0.2 * torch.randn(n, generator=gen)
            m.running_var.data = var
            m.weight.data = var.sqrt() * (0.3 + 0.6 * torch.rand(n, generator=gen))
            m.bias.data = 0.2 * torch.randn(n, generator=gen)
            m.num_batches_tracked.data = torch.tensor(123)
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average over the calibration batch
    if bns:
        model.train()
        with torch.no_grad():
            model(calibrate)
        model.eval()
    for m in bns:
        n = m.num_features
        # a floor under the variance: a channel (nearly) dead on the calibration batch would
        # otherwise divide by sqrt(eps) and blow rounding differences up on another input
        m.running_var.data = m.running_var.data + 0.1
        m.weight.data = 0.6 + 0.8 * torch.rand(n, generator=gen)
        m.bias.data = 0.1 * torch.randn(n, generator=gen)
        m.num_batches_tracked.data = torch.tensor(123)


def pooled(source: str, model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The head's input: torchvision's avgpool + flatten, timm's forward_head(pre_logits=True); for
    timm's MobileNetV3 its global pool only, as the runner's MobileNetV3 backbone ends there (timm's
    pre-logits `conv_head`, like mindcv's pre-logits Dense, belongs to the head the runner replaces)."""
    if source == "timm":
        feats = model.forward_features(x)
        if type(model).__name__ == "MobileNetV3":
            return model.flatten(model.global_pool(feats))
        return model.forward_head(feats, pre_logits=True)
    m = model
    y = m.maxpool(m.relu(m.bn1(m.conv1(x))))
    y = m.layer4(m.layer3(m.layer2(m.layer1(y))))
    return torch.flatten(m.avgpool(y), 1)


def pretrain(folder: str, out: str) -> None:
    from PIL import Image

    torch.manual_seed(0)
    classes = sorted(os.listdir(folder))
    xs, ys = [], []
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    for label, c in enumerate(classes):
        for f in sorted(os.listdir(os.path.join(folder, c))):
            img = Image.open(os.path.join(folder, c, f)).convert("RGB").resize((32, 32), Image.BILINEAR)
            xs.append(((np.asarray(img, np.float32) / 255 - mean) / std).transpose(2, 0, 1))
            ys.append(label)
    x, y = torch.tensor(np.stack(xs), dtype=torch.float32), torch.tensor(ys)
    model = torchvision.models.resnet18(weights=None, num_classes=len(classes))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model.train()
    losses = []
    for _ in range(6):
        for idx in torch.randperm(len(y)).split(16):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
            losses.append(loss.item())
    safetensors.torch.save_file({k: v.contiguous() for k, v in model.state_dict().items()}, out)
    print(json.dumps({"first_loss": losses[0], "last_loss": losses[-1], "steps": len(losses)}))


def main() -> None:
    if sys.argv[1] == "--pretrain":
        pretrain(sys.argv[2], sys.argv[3])
        return
    out, size, pairs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    pth: set[str] | None = None
    if pairs and pairs[0].startswith("--pth="):
        pth = set(pairs.pop(0)[len("--pth=") :].split(","))
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    inputs: dict[int, np.ndarray] = {}

    def input_of(px: int) -> np.ndarray:
        if px not in inputs:
            inputs[px] = np.random.default_rng(2).standard_normal((2, 3, px, px)).astype(np.float32)
            np.save(os.path.join(out, f"input-{px}.npy"), inputs[px])
        return inputs[px]

    np.save(os.path.join(out, "input.npy"), input_of(size))
    info: dict = {"torch": torch.__version__, "torchvision": torchvision.__version__, "timm": timm.__version__}
    for pair in pairs:
        name, _, px = pair.partition("@")
        source, arch = name.split(":")
        x = input_of(int(px) if px else size)
        model = build(source, arch)
        calibrate = None
        if not arch.startswith("resnet"):
            batch = np.random.default_rng(3).standard_normal((16, *x.shape[1:])).astype(np.float32)
            calibrate = torch.from_numpy(batch)
        perturb(model, gen, calibrate)
        model.eval()
        with torch.no_grad():
            feats = pooled(source, model, torch.from_numpy(x)).numpy()
        stem = os.path.join(out, f"{source}-{arch}")
        sd = {k: v.contiguous() for k, v in model.state_dict().items()}
        safetensors.torch.save_file(sd, stem + ".safetensors")
        if pth is None or arch in pth:
            torch.save(sd, stem + ".pth")
        np.save(stem + ".features.npy", feats)
        info[name] = {"tensors": len(sd), "feature_abs_max": float(np.abs(feats).max()), "size": x.shape[-1]}
    print(json.dumps(info))


if __name__ == "__main__":
    main()
