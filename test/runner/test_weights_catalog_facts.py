"""weights_catalog.json's facts that model.pretrained completion shows (licence, parameters, size) are
mindcv 0.3.0's own: the licence from its package metadata, the counts from its create_model; those of
its timm hub repositories are timm's own."""

from __future__ import annotations

import json
import os
import subprocess
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


REF_PY = Path(__file__).resolve().parents[2] / ".venv-ref" / "bin" / "python"


def test_the_timm_hub_entries_are_timms_own_tags_with_timms_facts():
    """Every `hf_hub` entry, and nothing else, is what timm itself lists for the mapped architectures
    (test/runner/models/timm_catalog.py in .venv-ref): repository, licence, head, input size,
    parameters and bytes. Each offered backbone of a mapped architecture gets at least one."""
    from ascend_finetune.models.torch_map import TIMM_MODELS

    if not REF_PY.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(".venv-ref is missing in CI: scripts/setup-python.sh must create it")
        pytest.skip("the reference venv .venv-ref is missing: run scripts/setup-ref-venv.sh")
    here = Path(__file__).resolve().parent / "models"
    r = subprocess.run(
        [str(REF_PY), str(here / "timm_catalog.py"), "--results", str(here / RESULTS_CSV), *TIMM_MODELS],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    timm_says = json.loads(r.stdout)
    hub = CATALOG["hf_hub"]
    assert sorted(hub) == sorted(timm_says)
    for repo, e in hub.items():
        t = timm_says[repo]
        assert e["backbone"] == TIMM_MODELS[t["arch"]], repo
        for k in ("license", "num_classes", "input_size", "params", "size_bytes"):
            assert e[k] == t[k], (repo, k)
        # timm's results table has a top-1 for the tags with an ImageNet-1K head only: the row of the tag
        # at its own input size.
        assert e.get("top1") == t.get("top1"), repo
        assert ("top1" in e) == (e["num_classes"] == 1000), repo
        if "top1" in e:
            assert e["top1_source"].endswith(f", {e['input_size']} px"), repo
    assert hub["timm/resnet50.a1_in1k"]["top1"] == 80.382  # the csv's resnet50.a1_in1k row at 224 px


# The rows of timm's results/results-imagenet.csv (git 4e5207c7) for the catalog's tags, as published.
RESULTS_CSV = "timm_results_imagenet.csv"


def test_every_mapped_timm_architecture_has_hub_entries_each_on_its_backbone():
    """The editor reads a hub repository's backbone from these entries' architectures (weightSources.ts
    backboneOfNamed), the runner from TIMM_MODELS: the two agree for every mapped architecture. And the
    order the wizard shows: per backbone, licences that allow commercial use first, then by top-1."""
    from ascend_finetune.models.torch_map import TIMM_MODELS

    hub = CATALOG["hf_hub"]
    archs = {repo.split("/")[1].split(".")[0] for repo in hub}
    assert archs == set(TIMM_MODELS)
    for repo, e in hub.items():
        assert repo.startswith("timm/") and e["backbone"] == TIMM_MODELS[repo.split("/")[1].split(".")[0]], repo
    for backbone in set(TIMM_MODELS.values()):
        mine = [e for e in hub.values() if e["backbone"] == backbone]
        key = [(e["license"] == "CC-BY-NC-4.0", -e.get("top1", 0)) for e in mine]
        assert key == sorted(key), backbone
