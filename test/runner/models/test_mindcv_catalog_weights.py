"""The catalog's mindcv weights load into the backbone they name: a checkpoint in the layout mindcv
publishes (mindcv 0.3.0's own model for that name, its cfg's class count, saved by MindSpore) loads
into the runner's backbone by name with nothing missing, unexpected or mis-shaped, and only the
classifier dropped. The published files themselves are not downloaded here (no network in tests):
this checks that the names and shapes the catalog promises are the ones the runner builds.

CI loads one model per way the runner reads a model (features from forward_features, its own
construct with the classifier replaced, a second classifier name, a 1001-class file);
ASCEND_FINETUNE_SLOW_TESTS=1 loads every entry."""

from __future__ import annotations

import importlib
import os

import mindspore as ms
import numpy as np
import pytest

from ascend_finetune.models import backbones as bb
from ascend_finetune.models.catalog import MINDCV
from ascend_finetune.models.net import TransferNet
from ascend_finetune.models.pretrained import load_backbone

ENTRIES = sorted(n for n, e in MINDCV.items() if e.backbone is not None and e.backbone in bb.mindcv_models())
CI = {"poolformer_s12", "googlenet", "squeezenet1_0", "mobilenet_v1_050"}
ALL = os.environ.get("ASCEND_FINETUNE_SLOW_TESTS") == "1"


def test_every_entry_names_an_offered_backbone_and_its_file_hash():
    offered = set(bb.all_names())
    for name, e in MINDCV.items():
        assert e.backbone is None or e.backbone in offered, name
    assert CI <= set(ENTRIES)


@pytest.mark.parametrize(
    "name",
    [n if ALL or n in CI else pytest.param(n, marks=pytest.mark.skip("ASCEND_FINETUNE_SLOW_TESTS=1")) for n in ENTRIES],
)
def test_a_checkpoint_in_mindcv_s_layout_loads_into_its_backbone(name, tmp_path):
    from mindcv.models import create_model
    from mindcv.models.registry import _model_to_module

    ms.set_context(mode=ms.PYNATIVE_MODE)
    cfg = importlib.import_module(f"mindcv.models.{_model_to_module[name]}").default_cfgs[name]
    path = str(tmp_path / os.path.basename(MINDCV[name].path))
    ref = create_model(name, num_classes=cfg["num_classes"], pretrained=False)
    ms.save_checkpoint(ref, path)  # names as mindcv's files have them: each Parameter's own name
    net = TransferNet(MINDCV[name].backbone, 3, 0, "default")
    report = load_backbone(net.backbone, path)
    assert (report.missing, report.unexpected, report.mismatched) == ([], [], []), name
    assert report.loaded and report.head_dropped, name
    # Each tensor went to the cell it came from (not merely one of the same shape).
    want = {n: p.asnumpy() for n, p in ref.parameters_and_names()}
    got = dict(net.backbone.model.parameters_and_names())
    assert all(np.array_equal(got[n].asnumpy(), want[n]) for n in report.loaded), name
