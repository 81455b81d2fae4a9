"""Reference side of test_torch_weights.py: runs in .venv-ref (torch, torchvision, timm, safetensors),
never in the runner's venv.

For each `source:arch` argument it builds the reference library's own ResNet with random weights
and BatchNorm statistics moved away from 0/1, saves its state dict as `<source>-<arch>.safetensors`
and `.pth`, and its pooled features (the input of its `fc` head, eval mode) on a fixed input as
`<source>-<arch>.features.npy`. The input goes to `input.npy`.

usage: python torch_ref.py OUT_DIR SIZE source:arch...
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


def perturb(model: torch.nn.Module, gen: torch.Generator) -> None:
    """BatchNorm affine and running statistics far from their initial 1/0, so a mapping that swaps
    mean and variance, or gamma and beta, or drops the statistics, shows up in the features."""
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            n = m.num_features
            var = 0.5 + 1.5 * torch.rand(n, generator=gen)
            m.running_mean.data = 0.2 * torch.randn(n, generator=gen)
            m.running_var.data = var
            # gamma scaled by sqrt(var) (as test_origins.py does), so the activations of 16-33 blocks
            # stay the size of a trained network's (pooled features of order 1) instead of growing
            m.weight.data = var.sqrt() * (0.3 + 0.6 * torch.rand(n, generator=gen))
            m.bias.data = 0.2 * torch.randn(n, generator=gen)
            m.num_batches_tracked.data = torch.tensor(123)


def pooled(source: str, model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The head's input: torchvision's avgpool + flatten, timm's forward_head(pre_logits=True)."""
    if source == "timm":
        return model.forward_head(model.forward_features(x), pre_logits=True)
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
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    x = np.random.default_rng(2).standard_normal((2, 3, size, size)).astype(np.float32)
    np.save(os.path.join(out, "input.npy"), x)
    info = {"torch": torch.__version__, "torchvision": torchvision.__version__, "timm": timm.__version__}
    for pair in pairs:
        source, arch = pair.split(":")
        model = build(source, arch)
        perturb(model, gen)
        model.eval()
        with torch.no_grad():
            feats = pooled(source, model, torch.from_numpy(x)).numpy()
        stem = os.path.join(out, f"{source}-{arch}")
        sd = {k: v.contiguous() for k, v in model.state_dict().items()}
        safetensors.torch.save_file(sd, stem + ".safetensors")
        torch.save(sd, stem + ".pth")
        np.save(stem + ".features.npy", feats)
        info[pair] = {"tensors": len(sd), "feature_abs_max": float(np.abs(feats).max())}
    print(json.dumps(info))


if __name__ == "__main__":
    main()
