"""weights_catalog.json's facts that model.pretrained completion shows (licence, parameters, size) are
mindcv 0.3.0's own: the licence from its package metadata, the counts from its create_model."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest

CATALOG = json.loads((Path(__file__).resolve().parents[2] / "runner/ascend_finetune/weights_catalog.json").read_text())


def test_every_entry_has_the_licence_mindcv_declares():
    assert metadata.version("mindcv") == "0.3.0"
    assert metadata.metadata("mindcv")["License"] == "Apache Software License 2.0"
    for name, e in CATALOG["mindcv"].items():
        assert e["license"] == "Apache-2.0", name
        assert e["params"] > 0 and e["size_bytes"] >= 4 * e["params"], name


# The two smallest (a few seconds on CPU); the others were counted the same way.
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v3_small_100"])
def test_parameters_and_size_are_mindcv_s_counts(name):
    import mindcv
    import mindspore as ms

    ms.set_context(mode=ms.PYNATIVE_MODE)
    net = mindcv.create_model(name, pretrained=False, num_classes=1000)
    e = CATALOG["mindcv"][name]
    assert e["params"] == sum(p.size for p in net.trainable_params())
    assert e["size_bytes"] == 4 * sum(p.size for p in net.get_parameters())


def test_every_top1_is_a_percentage_with_its_model_card():
    # From mindcv's configs/<family>/README.md at tag v0.3.0, the row linking the entry's own file.
    for name, e in CATALOG["mindcv"].items():
        if "top1" not in e:
            continue
        assert 0 < e["top1"] < 100, name
        assert e["top1_source"].startswith("mindcv v0.3.0 configs/") and e["top1_source"].endswith("/README.md"), name
    assert CATALOG["mindcv"]["resnet50"]["top1"] == 76.69  # the card's row for resnet50-e0733ab8.ckpt
