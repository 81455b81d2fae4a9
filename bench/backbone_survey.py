"""Which mindcv families the runner can offer as `model.backbone`, and what backbones.json says of them.

For one small variant of each of mindcv 0.3.0's families (its model modules), in a child process each:
build it (mindcv's own model, nothing patched) at 64 px on CPU (a model that fails there: at its
default cfg's input size, 224 where the cfg gives none), find where forward_features leaves the
features (pooled, a map, tokens; the model's own construct without its classifier where there is no
forward_features or it returns a list) and the stages (mindcv_net.structure), then in GRAPH mode train
2 steps of the runner's TransferNet (mindcv's features + the new head) and export MindIR. ok, or the
step that failed and the first line of the error.

    nice -n 10 .venv/bin/python bench/backbone_survey.py [--only vit,convnext] [--write] [--timeout 300]

--catalog PATH updates another copy of backbones.json (not the schema): two surveys over disjoint
--only lists can share a slow box, their results merged into backbones.json afterwards.

--write rewrites runner/ascend_finetune/backbones.json: every passing family's surveyed variant plus
the EXTRA variants of the families the issue names, and the survey's verdict per family. docs/weights.md
lists the failures with their reasons.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "runner"))

# The surveyed (smallest) variant where the name alone does not make it the first pick.
PICK = {
    "mobilenetv3": "mobilenet_v3_small_100",
    "efficientnet": "efficientnet_b0",
    "convnext": "convnext_tiny",
    "vit": "vit_b_32_224",
    "resnet": "resnet18",
    "regnet": "regnet_x_200mf",
    "mobilenetv2": "mobilenet_v2_100",
    "crossvit": "crossvit_9",
}
# More variants offered for the families the issue names (those with mindcv weights, and their kin).
EXTRA = {
    "mobilenetv3": ["mobilenet_v3_large_100"],
    "efficientnet": ["efficientnet_b1"],
    "convnext": ["convnext_small"],
    "vit": ["vit_b_16_224"],
}
# Families the runner has its own backbone for (models/net.py): surveyed, but not offered through mindcv.
OWN = {"resnet"}
SMALL = ("atto", "femto", "pico", "nano", "tiny", "small", "xxs", "xs", "s12", "b0", "050", "075", "100", "18", "_s")


def families() -> dict[str, list[str]]:
    from mindcv.models import registry

    out: dict[str, list[str]] = {}
    for name in registry.list_models():
        out.setdefault(registry._model_to_module[name], []).append(name)
    return out


def pick(family: str, names: list[str]) -> str:
    if family in PICK:
        return PICK[family]
    for key in SMALL:
        hits = [n for n in names if key in n]
        if hits:
            return sorted(hits, key=len)[0]
    return sorted(names, key=len)[0]


def describe(name: str, family: str, size: int = 64) -> dict:
    """backbones.json's entry for a model, from mindcv's model (PyNative forward at `size` px)."""
    import mindspore as ms
    import numpy as np
    from mindspore import nn

    from ascend_finetune.models.mindcv_net import build_mindcv, constants, structure

    ms.set_context(mode=ms.PYNATIVE_MODE)
    model = build_mindcv(name)
    model.set_train(False)
    cfg = config(name, family, model)
    head = head_cells(model, cfg)
    for attr in head:  # what the runner does (MindcvBackbone)
        setattr(model, attr, nn.Identity())
    x = ms.Tensor(np.zeros((1, 3, size, size), np.float32))
    call = "forward_features"
    out = model.forward_features(x) if hasattr(model, "forward_features") else None
    branches = isinstance(out, (list, tuple)) and out and all(isinstance(t, ms.Tensor) and t.ndim == 2 for t in out)
    if branches:  # CrossViT's: one class token per branch, which its head reads one Dense each
        out = ms.ops.concat(list(out), 1)
    elif not isinstance(out, ms.Tensor):  # none, or a list (HRNet's maps): the model's own construct
        call = "construct"
        out = model(x)

    def features(t):
        if branches:
            return ms.ops.concat(list(model.forward_features(t)), 1)
        return model(t) if call == "construct" else model.forward_features(t)

    if branches:
        pool, width = "concat", out.shape[1]
    elif out.ndim == 2:
        pool, width = "pooled", out.shape[1]
    elif out.ndim == 4:
        pool, width = "avg", out.shape[1]
    elif out.ndim == 3 and hasattr(model, "fc_norm"):  # ViT's tokens, pooled as its global_pool says
        pool, width = ("avg_tokens" if getattr(model, "global_pool", "token") == "avg" else "token"), out.shape[2]
    elif out.ndim == 3 and out.shape[1] == 1:  # PiT's: its class token alone, already normed
        pool, width = "class_token", out.shape[2]
    else:
        raise ValueError(f"{call} gave shape {out.shape}, which the runner does not pool")
    params = sum(int(np.prod(p.shape)) for n, p in model.parameters_and_names() if n.split(".")[0] not in head)
    fixed_params = constants(model)
    fixed = {} if size == 64 else {"image_size": size}  # takes only its own input size
    return {
        "family": family,
        **fixed,
        "num_features": int(width),
        "pool": pool,
        **({"call": call} if call == "construct" else {}),
        "head": head,
        **structure(model, family, features, size),
        "params": params,
        **({"constants": fixed_params} if fixed_params else {}),
        "preprocess": {
            # A model that takes one size only was trained at it (SwinV2's 256, which its cfg omits).
            "input_size": int(cfg["input_size"][-1]) if "input_size" in cfg else (size if size != 64 else 224),
            "crop_pct": float(cfg.get("crop_pct", 0.875)),
            "interpolation": str(cfg.get("interpolation", "bilinear")),
            "mean": [round(v * 255, 4) for v in cfg.get("mean", (0.485, 0.456, 0.406))],
            "std": [round(v * 255, 4) for v in cfg.get("std", (0.229, 0.224, 0.225))],
        },
    }


def config(name: str, family: str, model) -> dict:
    """mindcv's default cfg of a model: in its family's module (MAE's ViT, ResNetV2's ResNet are
    built by classes of other modules), else its class's."""
    for mod in ("mindcv.models." + family, type(model).__module__):
        cfgs = getattr(sys.modules.get(mod), "default_cfgs", {})
        if name in cfgs:
            return dict(cfgs[name])
    return {}


def head_cells(model, cfg: dict) -> list[str]:
    """The classifier's top-level cell (the default cfg's `classifier`, else the usual names), and
    any other top-level name for a cell inside it (SqueezeNet's `final_conv` is `classifier.1`): all
    replaced by an Identity, so no dead copy of the classifier stays in the network."""
    from mindspore import nn

    for attr in (str(cfg.get("classifier") or "").split(".")[0], "head", "classifier", "fc", "last_linear"):
        if attr and isinstance(getattr(model, attr, None), nn.Cell):
            inside = [id(c) for _, c in getattr(model, attr).cells_and_names()]
            return [attr] + [n for n, c in model.name_cells().items() if n != attr and id(c) in inside]
    raise ValueError(f"{type(model).__name__}: no classifier cell found")


# Where the default cfg names no size and the model takes another than 224: mindcv builds SwinV2 for
# 256 px (its constructor's image_size; configs/swintransformerv2's recipe resizes to 256).
OWN_SIZE = {"swinv2_tiny_window8": 256}


def input_size(name: str, family: str) -> int:
    """The size mindcv's default cfg gives, or the model's own (OWN_SIZE), or its usual 224 (CaiT, Swin)."""
    import mindcv  # noqa: F401  (imports the family modules)

    cfg = getattr(sys.modules.get("mindcv.models." + family), "default_cfgs", {}).get(name, {})
    return int(cfg["input_size"][-1]) if "input_size" in cfg else OWN_SIZE.get(name, 224)


def train_and_export(name: str, entry: dict, size: int = 64) -> None:
    """2 GRAPH-mode steps of TransferNet(name) with a fresh head, then a MindIR export."""
    import mindspore as ms
    import numpy as np
    from mindspore import nn

    from ascend_finetune.models import backbones as bb
    from ascend_finetune.models.net import TransferNet, apply_freeze, set_train_mode

    doc = {"backbones": {name: entry}, "families": {}}
    bb.catalog = lambda: doc  # this model's entry, before backbones.json has it
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_seed(0)
    net = TransferNet(name, 4, 0)
    apply_freeze(net)
    set_train_mode(net, True)
    step = nn.TrainOneStepCell(
        nn.WithLossCell(net, nn.CrossEntropyLoss()), nn.Momentum(net.trainable_params(), 0.01, 0.9)
    )
    step.set_train(True)
    x = ms.Tensor(np.random.default_rng(0).random((2, 3, size, size), np.float32))
    y = ms.Tensor(np.array([0, 1], np.int32))
    losses = [float(step(x, y).asnumpy()) for _ in range(2)]
    if not all(np.isfinite(losses)):
        raise ValueError(f"non-finite loss {losses}")
    net.set_train(False)
    with tempfile.TemporaryDirectory() as d:
        ms.export(net, x, file_name=os.path.join(d, "net"), file_format="MINDIR")
        if not os.path.getsize(os.path.join(d, "net.mindir")):
            raise ValueError("empty MindIR")


def child(name: str, family: str) -> dict:
    stage = "build"
    t0 = time.time()
    try:
        try:
            entry = describe(name, family)
        except Exception as e:  # a model with a fixed input size (a position embedding): its own size
            size = input_size(name, family)
            if size == 64:
                raise
            at64 = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:160]}"
            entry = describe(name, family, size)
        stage = "train"
        train_and_export(name, entry, int(entry.get("image_size", 64)))
        r = {"model": name, "status": "ok", "entry": entry, "seconds": round(time.time() - t0, 1)}
        if "image_size" in entry:
            r["note"] = f"{entry['image_size']} px images only; at 64 px: {at64}"
        return r
    except Exception as e:  # the survey's verdict, not a crash
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip("-: \t")]  # not MindSpore's rulers
        first = " ".join(lines[:2] if lines and lines[0].endswith(":") else lines[:1]) or type(e).__name__
        first = first[:240]
        return {"model": name, "status": "fail", "stage": stage, "reason": f"{type(e).__name__}: {first}"}


def run_child(name: str, family: str, timeout: float) -> dict:
    cmd = [sys.executable, __file__, "--child", name, "--family", family]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"model": name, "status": "fail", "stage": "train", "reason": f"over {timeout:.0f} s"}
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            return dict(json.loads(line))
    tail = (p.stderr.strip().splitlines() or ["no output"])[-1][:240]
    return {"model": name, "status": "fail", "stage": "build", "reason": f"exit {p.returncode}: {tail}"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", help="comma-separated families")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--catalog", help="another backbones.json to update (a parallel survey's share)")
    ap.add_argument("--child")
    ap.add_argument("--family")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.family)))
        return
    fams = families()
    only = a.only.split(",") if a.only else sorted(fams)  # in the order given: the cheap ones first
    out_path = a.catalog or os.path.join(HERE, "..", "runner", "ascend_finetune", "backbones.json")
    with open(out_path, encoding="utf-8") as f:
        doc = json.load(f)
    for fam in only:
        r = run_child(pick(fam, fams[fam]), fam, a.timeout)
        entry = r.pop("entry", None)
        took = str(r.get("seconds", ""))
        print(
            f"{fam:20s} {r['model']:28s} {r['status']:4s} {took:>6s} {r.get('stage', '')} {r.get('reason', '')}",
            flush=True,
        )
        doc["families"][fam] = r
        for n in [k for k, v in doc["backbones"].items() if v["family"] == fam]:
            del doc["backbones"][n]
        if r["status"] == "ok" and entry and fam not in OWN:
            doc["backbones"][r["model"]] = entry
            for extra in EXTRA.get(fam, []):
                doc["backbones"][extra] = json.loads(run_describe(extra, fam, int(entry.get("image_size", 64))))
        if a.write:  # after each family: a long survey keeps what it found
            write(doc, out_path, schema=not a.catalog)


def write(doc: dict, out_path: str, schema: bool = True) -> None:
    doc["backbones"] = dict(sorted(doc["backbones"].items()))
    doc["families"] = dict(sorted(doc["families"].items()))
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    if schema:
        update_schema(doc)


def update_schema(doc: dict) -> None:
    """spec.schema.json's model.backbone and freeze enums from backbones.json (the runner's ResNets
    first); spec.py checks the stage against the chosen backbone."""
    path = os.path.join(HERE, "..", "runner", "ascend_finetune", "spec.schema.json")
    with open(path, encoding="utf-8") as f:
        schema = json.load(f)
    model = schema["properties"]["model"]["properties"]
    from ascend_finetune.models.backbones import BACKBONES

    resnets = list(BACKBONES)  # not every name starting "resnet" (mindcv's resnetv2_50)
    descs = model["backbone"]["x-enumDescriptions"][: len(resnets)]
    names = list(doc["backbones"])
    model["backbone"]["enum"] = resnets + names
    model["backbone"]["x-enumDescriptions"] = descs + [
        f"mindcv {n} ({e['family']}): {e['num_features']} features, {e['params'] / 1e6:.1f}M parameters; "
        f"stages {', '.join(s['name'] for s in e['stages'])}."
        for n, e in doc["backbones"].items()
    ]
    base = ["none", "backbone"] + [f"up_to:layer{i}" for i in range(1, 5)]
    owners: dict[str, list[str]] = {}
    for n, e in doc["backbones"].items():
        for st in e["stages"]:
            if f"up_to:{st['name']}" not in base:  # ResNeSt's layer1-4: the ResNets' values, said once
                owners.setdefault(f"up_to:{st['name']}", []).append(n)
    freeze = model["freeze"]
    freeze["enum"] = base + stage_order(doc, list(owners))
    freeze["x-enumDescriptions"] = freeze["x-enumDescriptions"][: len(base)] + [
        f"mindcv ({', '.join(owners[v])}): the stem and the stages up to {v[6:]} are frozen."
        for v in freeze["enum"][len(base) :]
    ]
    model["unfreeze"]["items"]["properties"]["freeze"]["enum"] = list(freeze["enum"])
    with open(path, "w", encoding="utf-8") as f:
        json.dump(schema, f, indent=2, ensure_ascii=False)
        f.write("\n")
    # spec_types.py's Literals of the same enums (test/runner/test_spec_types.py holds them equal)
    types = os.path.join(HERE, "..", "runner", "ascend_finetune", "spec_types.py")
    with open(types, encoding="utf-8") as f:
        text = f.read()
    for alias, values in (("Backbone", model["backbone"]["enum"]), ("Freeze", freeze["enum"])):
        body = ",\n".join(f'    "{v}"' for v in values)
        text = re.sub(
            rf"^{alias} = Literal\[(.|\n)*?\]\n", f"{alias} = Literal[\n{body},\n]\n", text, count=1, flags=re.M
        )
    with open(types, "w", encoding="utf-8") as f:
        f.write(text)
    update_translations(model["backbone"]["x-enumDescriptions"] + freeze["x-enumDescriptions"])


# The two generated sentences above and their zh-cn wording (l10n/schema.l10n.zh-cn.json, keyed by
# the English text: the language server's hover shows them; test/unit/spec/schemaL10n.test.ts holds
# every schema text translated and none left over).
BACKBONE_TEXT = re.compile(r"^mindcv (\S+) \((\w+)\): (\d+) features, ([\d.]+)M parameters; stages (.*)\.$")
FREEZE_TEXT = re.compile(r"^mindcv \((.*)\): the stem and the stages up to (\S+) are frozen\.$")


def _zh(text: str) -> str | None:
    if m := BACKBONE_TEXT.match(text):
        name, family, width, params, stages = m.groups()
        return f"mindcv {name}（{family}）：{width} 维特征，{params}M 参数；阶段 {'、'.join(stages.split(', '))}。"
    if m := FREEZE_TEXT.match(text):
        return f"mindcv（{'、'.join(m.group(1).split(', '))}）：冻结 stem 以及直到 {m.group(2)} 的各阶段。"
    return None


def update_translations(texts: list[str]) -> None:
    path = os.path.join(HERE, "..", "l10n", "schema.l10n.zh-cn.json")
    with open(path, encoding="utf-8") as f:
        table = json.load(f)
    kept = {k: v for k, v in table.items() if _zh(k) is None}  # the generated ones are written anew
    kept.update({t: zh for t in texts if (zh := _zh(t)) is not None})
    with open(path, "w", encoding="utf-8") as f:
        json.dump(kept, f, indent=2, ensure_ascii=False)
        f.write("\n")


def stage_order(doc: dict, values: list[str]) -> list[str]:
    """The `up_to:` values so that each backbone's stages come in its own order (the language server
    and the wizard list a backbone's stages in the enum's order; ConViT's blocks.11 must not put
    ViT's blocks.11 before its blocks.2): first-seen order, each value after every stage it follows."""
    after: dict[str, set[str]] = {v: set() for v in values}
    for e in doc["backbones"].values():
        names = [f"up_to:{st['name']}" for st in e["stages"]]
        for a, b in zip(names, names[1:]):
            if b in after and a in after:
                after[b].add(a)
    out: list[str] = []
    while len(out) < len(values):
        ready = [v for v in values if v not in out and after[v] <= set(out)]
        if not ready:
            raise ValueError(f"stage names in conflicting orders: {sorted(set(values) - set(out))[:6]}")
        out.append(ready[0])
    return out


def run_describe(name: str, family: str, size: int) -> str:
    code = (
        f"import json, sys; sys.path.insert(0, {HERE!r}); import backbone_survey as s; "
        f"print(json.dumps(s.describe({name!r}, {family!r}, {size})))"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return p.stdout.strip().splitlines()[-1]


if __name__ == "__main__":
    main()
