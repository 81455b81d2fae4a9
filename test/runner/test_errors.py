"""The errors a user will meet: each names the field and the fix, and loses nothing."""

from __future__ import annotations

import json
import os

import mindspore as ms
import numpy as np
from conftest import events, of_type, runner, spec, write_spec
from PIL import Image

from ascend_finetune.data.demo import make_shapes


def _validate(tmp_path, s):
    code, out = runner("validate", str(write_spec(tmp_path / "s.json", s)))
    return code, {p["path"]: p for p in out["problems"]}


def test_validate_names_every_problem_with_a_fix(data_a, tmp_path):
    s = spec(data_a)
    s["data"]["batchsize"] = 8  # mistyped field
    s["trian"] = {}  # mistyped section
    s["train"]["epochs"] = "ten"  # wrong type
    s["train"]["lr"] = -1  # out of range
    s["amp"]["level"] = "O4"  # not an enum value
    s["model"]["freeze"] = "up_to:layer9"
    s["checkpoint"]["keep_max"] = 0
    s["data"]["augment"] = "yes"
    s["data"]["workers"] = 2.0  # a float where a whole number is needed
    code, problems = _validate(tmp_path, s)
    assert code == 2
    assert problems["data.batchsize"]["fix"] == 'did you mean "batch_size"?'
    assert problems["trian"]["fix"] == 'did you mean "train"?'
    assert "integer" in problems["train.epochs"]["message"]
    assert "> 0.0" in problems["train.lr"]["message"]
    assert "O0, O1, O2, O3, auto" in problems["amp.level"]["fix"]
    assert "up_to:layer4" in problems["model.freeze"]["fix"]
    assert ">= 1" in problems["checkpoint.keep_max"]["message"]
    assert "basic, none, randaugment" in problems["data.augment"]["fix"]
    assert "integer" in problems["data.workers"]["message"]
    assert len(problems) == 9


def test_validate_ok_and_missing_paths(data_a, tmp_path):
    assert runner("validate", str(write_spec(tmp_path / "ok.json", spec(data_a))))[0] == 0
    s = spec(tmp_path / "no-such-dir", model={"pretrained": str(tmp_path / "none.ckpt")})
    code, problems = _validate(tmp_path, s)
    assert code == 2 and "folder not found" in problems["data.train"]["message"]
    assert "file not found" in problems["model.pretrained"]["message"]
    code, out = runner("launch", str(tmp_path / "s.json"), "--runs-root", str(tmp_path / "runs"))
    assert code == 2 and out["error"]["problems"], "launch refuses before detaching anything"
    assert not os.path.exists(tmp_path / "runs")
    (tmp_path / "bad.json").write_text('{"name": "x",\n "data": {"train": }}')
    code, out = runner("validate", str(tmp_path / "bad.json"))
    assert code == 2 and "line 2" in out["problems"][0]["message"]


def _train_fails(tmp_path, s, name="run"):
    code, out = runner("train", str(write_spec(tmp_path / f"{name}.json", s)), "--run-dir", str(tmp_path / name))
    evs = events(tmp_path / name)
    assert evs[-1]["type"] == "run_finished" and evs[-1]["status"] == "failed"
    status = json.load(open(tmp_path / name / "status.json"))
    assert status["state"] == "failed" and status["exit_code"] == code
    return code, evs[-1]["error"]


def test_data_root_problems(tmp_path):
    one = tmp_path / "one"
    make_shapes(str(one), per_class=3, size=32, classes={"only": ("circle", (200, 0, 0))})
    code, err = _train_fails(tmp_path, spec(one), "run-one")
    assert code == 2 and err["path"] == "data.train" and "at least 2" in err["message"]

    empty = tmp_path / "empty"
    make_shapes(str(empty), per_class=3, size=32)
    for f in os.listdir(empty / "red circle"):
        os.remove(empty / "red circle" / f)
    (empty / "red circle" / "notes.txt").write_text("not an image")
    code, err = _train_fails(tmp_path, spec(empty), "run-empty")
    assert code == 2 and "red circle" in err["message"] and "no readable images" in err["message"]

    four = tmp_path / "four"
    make_shapes(str(four), per_class=3, size=32)
    code, err = _train_fails(tmp_path, spec(four, model={"num_classes": 5}), "nc")
    assert code == 2 and err["path"] == "model.num_classes"


def test_messy_images_are_skipped_or_work(tmp_path):
    """Unicode class names with spaces, upper-case extensions, grayscale and RGBA images train;
    truncated, corrupt and non-image files are skipped, counted and listed."""
    root = tmp_path / "messy"
    make_shapes(
        str(root),
        per_class=12,
        size=32,
        classes={"Katze mit Hut": ("circle", (220, 40, 40)), "猫 cat": ("square", (40, 180, 60))},
    )
    cls = root / "Katze mit Hut"
    Image.new("L", (32, 32), 128).save(cls / "GRAY.PNG")
    Image.new("RGBA", (32, 32), (10, 200, 30, 120)).save(cls / "alpha.png")
    Image.new("RGB", (32, 32), (200, 30, 30)).save(cls / "UPPER.JPG", format="JPEG")
    data = (cls / "UPPER.JPG").read_bytes()
    (cls / "truncated.jpg").write_bytes(data[: len(data) // 2])
    (cls / "garbage.png").write_bytes(b"\x89PNG not really")
    (root / "猫 cat" / "readme.md").write_text("hi")
    s = spec(root, train={"epochs": 1}, data={"batch_size": 8}, checkpoint={"keep_best": True})
    code, out = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(tmp_path / "run"))
    assert code == 0, out
    evs = events(tmp_path / "run")
    warn = next(w for w in of_type(evs, "warning") if w["code"] == "images_skipped")
    skipped = {os.path.basename(p["path"]) for p in warn["details"]["first"]}
    assert skipped == {"truncated.jpg", "garbage.png", "readme.md"} and warn["details"]["count"] == 3
    started = of_type(evs, "run_started")[0]
    assert started["classes"] == ["Katze mit Hut", "猫 cat"]
    assert started["num_train"] + started["num_val"] == 12 * 2 + 3
    assert json.load(open(tmp_path / "run" / "classes.json", encoding="utf-8")) == ["Katze mit Hut", "猫 cat"]
    assert evs[-1]["status"] == "completed"


def test_pretrained_problems(data_a, tmp_path):
    not_ckpt = tmp_path / "not.ckpt"
    not_ckpt.write_bytes(os.urandom(4096))
    code, err = _train_fails(tmp_path, spec(data_a, model={"pretrained": str(not_ckpt)}), "notckpt")
    assert code == 2 and "not.ckpt is not a usable checkpoint: not a MindSpore ckpt file" in err["message"]

    # a checkpoint of another architecture: resnet50 weights offered to a resnet18
    from ascend_finetune.models.net import TransferNet

    r50 = tmp_path / "r50.ckpt"
    ms.save_checkpoint(TransferNet("resnet50", 10), str(r50))
    code, err = _train_fails(tmp_path, spec(data_a, model={"pretrained": str(r50)}), "r50")
    assert code == 2 and "another architecture" in err["message"]


def test_mindcv_and_modelzoo_names_map_onto_the_backbone(tmp_path):
    from ascend_finetune.models.net import TransferNet
    from ascend_finetune.models.pretrained import load_backbone, map_name

    assert map_name("layer1.0.down_sample.0.weight") == "layer1.0.down_sample_layer.0.weight"  # mindcv
    assert map_name("layer2.1.bn1d.gamma") == "layer2.1.bn1.gamma"  # ModelZoo r18
    assert map_name("norm.moving_mean") == "bn1.moving_mean"  # tutorial
    assert map_name("layer3.0.norm2.beta") == "layer3.0.bn2.beta"
    for dropped in ("end_point.weight", "fc.bias", "classifier.weight", "moments.conv1.weight", "global_step"):
        assert map_name(dropped) is None
    # a mindcv-style resnet18 checkpoint (names rewritten from a real net) loads every tensor
    src = TransferNet("resnet18", 1000)
    entries = []
    for name, p in src.backbone.parameters_and_names():
        entries.append({"name": name.replace("down_sample_layer", "down_sample"), "data": p})
    entries.append({"name": "classifier.weight", "data": ms.Tensor(np.zeros((1000, 512), np.float32))})
    path = tmp_path / "mindcv_resnet18.ckpt"
    ms.save_checkpoint(entries, str(path))
    dst = TransferNet("resnet18", 3)
    report = load_backbone(dst.backbone, str(path))
    assert not report.missing and not report.unexpected and not report.mismatched
    assert report.head_dropped == ["classifier.weight"]
    assert np.array_equal(
        dst.backbone.layer2[0].down_sample_layer[0].weight.asnumpy(),
        src.backbone.layer2[0].down_sample_layer[0].weight.asnumpy(),
    )


def test_nan_loss_for_several_steps_fails_the_run(data_a, tmp_path):
    # A learning rate of 100 in pure fp16 (O3, no loss scaling): two steps blow the weights up,
    # after which every activation overflows and every loss is NaN.
    s = spec(
        data_a, amp={"level": "O3", "loss_scale": "none"}, train={"epochs": 3, "lr": 100, "max_nonfinite_steps": 3}
    )
    code, err = _train_fails(tmp_path, s)
    assert code == 1 and err["kind"] == "nonfinite_loss" and "3 consecutive steps" in err["message"]
    steps = of_type(events(tmp_path / "run"), "step")
    assert steps[0]["loss"] is not None
    assert all(st["loss"] is None and st["skipped"] for st in steps[-3:])
    assert steps[-1]["step"] < of_type(events(tmp_path / "run"), "run_started")[0]["total_steps"], "it stopped early"


def test_sink_and_amp_fallbacks_are_said_not_silent():
    from ascend_finetune.device.backend import sink_notes
    from ascend_finetune.models.amp import plan

    assert [c for c, _, _ in sink_notes({"enabled": True, "size": 1}, "CPU")] == ["sink_unavailable"]
    assert sink_notes({"enabled": True, "size": 1}, "Ascend") == []
    assert sink_notes({"enabled": True, "size": 8}, "Ascend", 96) == []  # 12 sinks of 8 an epoch
    ((code, msg, params),) = sink_notes({"enabled": True, "size": 8}, "Ascend", 100)
    assert code == "sink_size_reduced" and "each sink runs 5 steps" in msg and "sink.size" in msg
    assert params == {"size_used": 5, "steps_per_epoch": 100}  # the message's numbers, to reword it
    cached = sink_notes({"enabled": True, "size": 8}, "Ascend", 96, cached=True)
    assert [c for c, _, _ in cached] == ["sink_unavailable"]
    assert sink_notes({"enabled": False, "size": 8}, "CPU") == []
    for target in ("CPU", "Ascend"):  # MindSpore's own auto, passed through (test_amp.py trains with it on CPU)
        p = plan({"level": "auto", "loss_scale": "dynamic"}, target)
        assert p.level == "auto" and not p.notes
    assert plan({"level": "O2", "loss_scale": "fixed"}, "CPU").notes == []
