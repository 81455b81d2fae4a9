"""The runner's warning codes, verdict reasons and error codes with the named parameters they carry, taken from
the real emit helpers, against test/runner/fixtures/runner_codes.json: the file the extension's
unit test (test/unit/runs/runnerCodes.test.ts) renders its localised sentences from. A parameter
renamed or dropped here fails this test; a template reading a parameter the runner never sends
fails that one. Run with ASCEND_WRITE_CODES=1 to rewrite the recorded entries after a deliberate
change. Entries marked "recorded": false come from code paths that need a whole run or a device
(their parameters are read off the call sites and docs/protocol.md)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from error_codes import errors

from ascend_finetune.data.plan import skipped_warning
from ascend_finetune.device.backend import sink_notes
from ascend_finetune.models import preprocess
from ascend_finetune.models.download import Fetched
from ascend_finetune.models.pretrained import LoadReport
from ascend_finetune.train import preflight
from ascend_finetune.train.steps import DATA_WAIT_WARMUP, DATA_WAIT_WINDOW, DataWaitMonitor
from ascend_finetune.train.verdict import Eval, RunRecord, Step, judge

FIXTURE = Path(__file__).parent / "fixtures" / "runner_codes.json"


def _verdict_reasons() -> list[dict]:
    """Every verdict reason, from judge() on records crafted to trip each rule."""
    frozen = {"model": {"freeze": "backbone", "pretrained": None}}
    losses = [1.0] * 10 + [None] + [3.0] * 10
    rec = RunRecord(
        frozen,
        num_classes=4,
        num_val=40,
        steps=[Step(i, x, 1) for i, x in enumerate(losses, 1)],
        evals=[Eval(21, 0.25, 1.4)],
        class_counts=[10, 10, 10, 10],
    )
    error = {
        "kind": "bad_input",
        "code": "too_few_classes",
        "params": {"count": 1, "folder": "/d/train"},
        "message": "found 1 class folder(s) in /d/train; a classifier needs at least 2",
        "fix": "put one sub-folder per class (each with images) under the data root",
    }
    failed = judge(rec, "failed", error)
    small = judge(RunRecord({}, num_classes=4, num_val=12, class_counts=[3, 3, 3, 3]), "completed")
    # val_too_small's other fixes (verdict._val_fix): add images, raise the split, set one
    for split, num_val, counts in ((0.2, 8, [2] * 4), (0.1, 16, [4] * 4), (0, 0, None)):
        rec = RunRecord({"data": {"val_split": split}}, num_classes=4, num_val=num_val, class_counts=counts)
        small["reasons"] += judge(rec, "completed")["reasons"]
    falling = [Step(i, x, 0) for i, x in enumerate([2.0] * 10 + [0.5] * 10, 1)]
    fits = judge(
        RunRecord({}, num_classes=4, num_val=40, steps=falling, evals=[Eval(20, 0.25, 1.4)], class_counts=[10] * 4),
        "completed",
    )
    # val_fell; its other fix (a cosine schedule, keep_best off) for an older runner's evals (no epoch); each
    # with an EMA best (train.ema) too
    fell: list[dict] = []
    other = {"train": {"lr_schedule": "cosine"}, "checkpoint": {"keep_best": False}}
    for spec_, epochs, ema in (
        ({}, (7, 8), None),
        (other, (None, None), None),
        ({}, (7, 8), 0.97),
        (other, (None, None), 0.97),
    ):
        evals = [Eval(280, 0.944, 0.2, epochs[0], ema, 0.2), Eval(320, 0.431, 1.9, epochs[1])]
        rec = RunRecord(spec_, num_classes=6, num_val=72, evals=evals, class_counts=[12] * 6)
        fell += judge(rec, "completed")["reasons"]
    fits_train_only = [r for r in fits["reasons"] if r["code"] == "fits_train_only"]
    return failed["reasons"] + small["reasons"] + fits_train_only + fell


def _warnings() -> list[dict]:
    spec = {
        "data": {"workers": 64},
        "device": {"target": "Ascend", "ids": [0, 1]},
        "checkpoint": {"every_steps": 1000},
        "model": {"freeze": "backbone", "pretrained": None},
    }
    out = preflight.run_warnings(spec, 100, 10, "CPU", cpu_count=8)
    npus = {
        "devices": [{"id": 0, "chip": 0, "hbm_used_mb": 31000, "hbm_total_mb": 32000}],
        "processes": [{"npu": 0, "chip": 0, "pid": 4242, "name": "python", "memory_mb": 3000}],
    }
    out += preflight.device_warnings(spec, "Ascend", read_npus=lambda: npus, own_pids=set())
    out.append(skipped_warning([("a/b.jpg", "OSError: truncated")]))
    sink = {"enabled": True, "size": 8}
    for target, steps, cached in (("CPU", 100, False), ("Ascend", 100, False), ("Ascend", 96, True)):
        for code, msg, params in sink_notes(sink, target, steps, cached):
            out.append({"code": code, "message": msg, "details": {"sink": sink, "target": target, **params}})
    monitor = DataWaitMonitor(workers=2, image_size=224, cached=False)
    for _ in range(DATA_WAIT_WARMUP + DATA_WAIT_WINDOW):
        w = monitor.observe(100.0, 60.0) or None
    out.append(w)
    partial = LoadReport(loaded=["a"], missing=["b"], mismatched=["c: (3,) in file, (4,) in resnet18"])
    out.append(partial.partial_warning("/w/r18.ckpt"))
    out += _hub_config_warnings()
    out += _not_recorded_warning()
    odd = Fetched(
        "/c/weights/mindcv/resnet18-1e65cd21.ckpt", "mindcv:resnet18", "http://m/r.ckpt", "ab" * 32, True, "1e65cd21"
    )
    out.append(odd.name_hash_warning())
    return out


class _Hub:
    """What download.fetch_hub_config gives: a config.json that is missing (`problem`) or hostile."""

    url = "http://127.0.0.1:1/timm/vit_x.augreg/resolve/main/config.json"

    def __init__(self, data: bytes, problem: str | None) -> None:
        self.data, self.problem = data, problem


def _hub_config_warnings() -> list[dict]:
    out = []
    for hub in (_Hub(b"", "HTTP 404"), _Hub(b'{"pretrained_cfg": {"mean": [2, 2, 2]}}', None)):
        p, notes = preprocess.choose("auto", "hf-hub:timm/vit_x.augreg", "torch", hub)
        for code, message, params in notes:  # as resolve() sends them
            out.append(
                {"code": code, "message": message, "details": {"preprocess": p.name, "config": hub.url, **params}}
            )
    return out


def _not_recorded_warning() -> list[dict]:
    """A runner checkpoint away from its run's checkpoints.json, as model.pretrained under `auto`."""
    out: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        loose = os.path.join(tmp, "best.ckpt")
        open(loose, "wb").close()
        preprocess.resolve("auto", loose, "runner", lambda **w: out.append(w))
    return [w for w in out if w["code"] == "preprocess_not_recorded"]


def _shape(value: object) -> str:
    """A parameter's JSON type: what a template may rely on."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(value)]


def recorded() -> dict[str, dict]:
    found: dict[str, dict] = {}
    for r in _verdict_reasons():
        params = {k: v for k, v in r.items() if k not in ("code", "message", "fix")}
        key = f"reason:{r['code']}"
        entry = {"message": r["message"], "fix": r["fix"], "params": params}
        if key in found:  # another variant of the reason (val_too_small's fixes): its parameters too
            found[key].setdefault("variants", []).append(entry)
        else:
            found[key] = entry
    for e in errors():
        key = f"error:{e['code']}"
        entry = {"message": e["message"], **({"fix": e["fix"]} if e.get("fix") else {}), "params": e["params"]}
        if key in found:  # another variant of the code (unsafe_file's causes): its parameters too
            found[key].setdefault("variants", []).append(entry)
        else:
            found[key] = entry
    for w in _warnings():
        key = f"warning:{w['code']}"
        if key in found:  # a second variant of the code (sink_unavailable's causes): its parameters too
            found[key].setdefault("variants", []).append({"message": w["message"], "params": w["details"]})
        else:
            found[key] = {"message": w["message"], "params": w["details"]}
    return found


def test_every_recorded_code_sends_the_parameters_the_fixture_lists():
    now = recorded()
    assert {"reason:run_failed", "reason:chance_level", "reason:val_too_small", "warning:npu_busy"} <= set(now)
    assert {"error:too_few_classes", "error:unsafe_file", "error:bad_run", "error:exception"} <= set(now)
    assert len([k for k in now if k.startswith("reason:")]) == 9  # every rule of verdict.judge
    saved = json.loads(FIXTURE.read_text()) if FIXTURE.exists() else {}
    if os.environ.get("ASCEND_WRITE_CODES") == "1":
        merged = {k: v for k, v in saved.items() if not v.get("recorded", True)} | {
            k: {**v, "recorded": True} for k, v in now.items()
        }
        FIXTURE.write_text(json.dumps(dict(sorted(merged.items())), indent=1, ensure_ascii=False) + "\n")
        saved = merged
    for key, entry in now.items():
        assert key in saved and saved[key].get("recorded"), f"{key} is not in {FIXTURE.name}"
        variants = [entry, *entry.get("variants", [])]
        kept = [saved[key], *saved[key].get("variants", [])]
        assert len(variants) == len(kept), key
        for got, want in zip(variants, kept, strict=True):
            shape = {k: _shape(v) for k, v in got["params"].items()}
            assert shape == {k: _shape(v) for k, v in want["params"].items()}, key
