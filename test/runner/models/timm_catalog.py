"""The facts of weights_catalog.json's `hf_hub` entries as timm itself states them; runs in .venv-ref
(torch, timm), never in the runner's venv.

For each timm architecture the runner maps (torch_map.TIMM_MODELS, passed as arguments), every
pretrained tag timm publishes on the hub under `timm/` whose network is the architecture's own (the
same state-dict names and shapes as `create_model(arch)`, head aside: only then does the checked
mapping apply) and whose licence timm records. For each: the hub repository, licence (SPDX spelling),
the classes its head has (0: published without one), input size, trainable parameters and float32
bytes of every tensor (parameters and norm statistics; not BatchNorm's step counter), as
mindcv's entries count them.

usage: python timm_catalog.py ARCH...                       JSON facts on stdout (the test compares)
       python timm_catalog.py --results CSV ARCH...          the same with `top1`: the row of timm's
                                                            results/results-imagenet.csv for the tag at
                                                            its own input size (timm_results_imagenet.csv
                                                            here: that table's rows for these tags, git
                                                            4e5207c7 of timm's repository)
"""

from __future__ import annotations

import csv
import json
import sys

import timm
import torch

SPDX = {"apache-2.0": "Apache-2.0", "bsd-3-clause": "BSD-3-Clause", "cc-by-nc-4.0": "CC-BY-NC-4.0", "mit": "MIT"}


def body(model: torch.nn.Module) -> dict[str, tuple[int, ...]]:
    """State-dict names and shapes without the classifier (timm's `get_classifier()`)."""
    head = {id(p) for p in model.get_classifier().parameters()} if model.get_classifier() is not None else set()
    names = {id(p): n for n, p in model.named_parameters() if id(p) in head}
    skip = set(names.values())
    return {
        n: tuple(t.shape) for n, t in model.state_dict().items() if n not in skip and "num_batches_tracked" not in n
    }


def create(name: str) -> torch.nn.Module:
    """The model without its weights' memory or initialisation (only names and shapes are read)."""
    with torch.device("meta"):
        return timm.create_model(name, pretrained=False)


def facts(arch: str, top1: dict[tuple[str, int], float] | None) -> dict[str, dict]:
    ref = body(create(arch))
    out: dict[str, dict] = {}
    for tag in timm.list_pretrained(f"{arch}.*"):
        cfg = timm.models.get_pretrained_cfg(tag)
        if not (cfg.hf_hub_id or "").startswith("timm/") or cfg.license not in SPDX:
            continue
        model = create(tag)
        if body(model) != ref:
            continue
        size = int(cfg.input_size[-1])
        e = {
            "arch": arch,
            "license": SPDX[cfg.license],
            "num_classes": int(cfg.num_classes or 0),
            "input_size": size,
            "params": sum(p.numel() for p in model.parameters() if p.requires_grad),
            "size_bytes": 4 * sum(t.numel() for n, t in model.state_dict().items() if "num_batches_tracked" not in n),
        }
        if top1 is not None and (tag, size) in top1:
            e["top1"] = top1[(tag, size)]
        out[cfg.hf_hub_id] = e
    return out


def main(argv: list[str]) -> None:
    top1 = None
    if argv[:1] == ["--results"]:
        with open(argv[1], newline="", encoding="utf-8") as f:
            top1 = {(r["model"], int(r["img_size"])): float(r["top1"]) for r in csv.DictReader(f)}
        argv = argv[2:]
    doc: dict[str, dict] = {}
    for arch in argv:
        doc.update(facts(arch, top1))
    json.dump(doc, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
