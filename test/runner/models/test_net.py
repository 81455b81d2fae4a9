"""The network: backbones with the model zoo's shapes, the head, what each freeze mode freezes."""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest

from ascend_finetune.models.net import TransferNet, apply_freeze, frozen_parts


@pytest.mark.parametrize(
    "name,features,tensors",
    [("resnet18", 512, 100), ("resnet34", 512, 180), ("resnet50", 2048, 265), ("resnet101", 2048, 520)],
)
def test_backbones_build_with_modelzoo_shapes(name, features, tensors):
    net = TransferNet(name, 7)
    assert net.backbone.num_features == features
    assert net.head.weight.shape == (7, features)
    assert len(list(net.backbone.get_parameters())) == tensors
    w = np.abs(net.head.weight.asnumpy())
    assert 0 < w.std() < 0.05, "head init Normal(0.02)"


def test_resnet18_forward_gives_class_logits():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        out = TransferNet("resnet18", 5)(ms.Tensor(np.zeros((2, 3, 32, 32), np.float32)))
    finally:
        ms.set_context(mode=ms.GRAPH_MODE)
    assert out.shape == (2, 5)


@pytest.mark.parametrize(
    "freeze,frozen_prefixes",
    [
        ("none", []),
        ("backbone", ["conv1", "bn1", "layer1", "layer2", "layer3", "layer4"]),
        ("up_to:layer2", ["conv1", "bn1", "layer1", "layer2"]),
    ],
)
def test_freeze_modes_mark_exactly_their_parts(freeze, frozen_prefixes):
    net = TransferNet("resnet18", 3, frozen_parts(freeze))
    apply_freeze(net)
    for name, p in net.parameters_and_names():
        part = name.split(".")[1] if name.startswith("backbone.") else "head"
        if "moving_" in name:
            continue  # statistics are never trainable
        assert p.requires_grad == (part not in frozen_prefixes), name
