"""Resume does not need model.pretrained's file: the resumed checkpoint replaces every weight it gave and
records the preprocessing, so a parent run's checkpoint pruned since (or a weights cache cleared on an
offline target) no longer stops a Resume with bad_spec. The lineage and preprocessing carry over."""

from __future__ import annotations

import json

from conftest import events, of_type, runner, spec, write_spec


def values(preprocess: dict) -> dict:
    return {k: v for k, v in preprocess.items() if k != "why"}  # how they were chosen: said otherwise on resume


def test_resume_completes_after_the_parent_checkpoint_is_gone(tmp_path, data_a, data_b):
    a = spec(data_a, name="a", train={"epochs": 1})
    code, out = runner("train", str(write_spec(tmp_path / "a.json", a)), "--run-dir", str(tmp_path / "a"))
    assert code == 0, out
    parent = tmp_path / "a" / of_type(events(tmp_path / "a"), "checkpoint")[-1]["file"]
    # Fine-tune B from A's checkpoint for 2 epochs, with checkpoints mid-way.
    b = spec(
        data_b,
        name="b",
        model={"pretrained": str(parent), "freeze": "backbone", "preprocess": {"crop_pct": 1.0}},
        train={"epochs": 2, "lr": 0.01, "cache_features": True},
        checkpoint={"every_steps": 3, "keep_max": 50},
    )
    code, out = runner("train", str(write_spec(tmp_path / "b.json", b)), "--run-dir", str(tmp_path / "b"))
    assert code == 0, out
    b_evs = events(tmp_path / "b")
    started = of_type(b_evs, "run_started")[0]
    first = of_type(b_evs, "checkpoint")[0]
    assert first["step"] == 3 < started["total_steps"]
    parent.rename(tmp_path / "moved.ckpt")  # A's checkpoint pruned: model.pretrained is gone

    def resume_b_into(name: str):
        """B resumed from its first checkpoint, with its own spec.json, into a new run folder."""
        b_dir = tmp_path / "b"
        return runner(
            "train", str(b_dir / "spec.json"), "--run-dir", str(tmp_path / name), "--resume", str(b_dir / first["file"])
        )

    # A new run from that spec is refused as before; Resume from B's own spec.json goes on.
    code, out = runner("train", str(tmp_path / "b" / "spec.json"), "--run-dir", str(tmp_path / "new"))
    assert code == 2 and out["error"]["kind"] == "bad_spec", out
    # The extension validates before it resumes: `validate --resume` accepts what `validate` refuses.
    code, out = runner("validate", str(tmp_path / "b" / "spec.json"))
    assert code == 2 and [p["path"] for p in out["problems"]] == ["model.pretrained"], out
    code, out = runner("validate", "--resume", str(tmp_path / "b" / "spec.json"))
    assert code == 0 and out["ok"], out
    code, out = resume_b_into("resumed")
    assert code == 0, out
    evs = events(tmp_path / "resumed")
    assert evs[-1]["type"] == "run_finished" and evs[-1]["status"] == "completed"
    again = of_type(evs, "run_started")[0]
    assert again["resumed_from"]["step"] == 3
    assert [s["step"] for s in of_type(evs, "step")] == list(range(4, started["total_steps"] + 1))
    # The preprocessing is the resumed checkpoint's record (crop 1.0 from the spec, over A's imagenet values).
    assert values(again["preprocess"]) == values(started["preprocess"]) and again["preprocess"]["crop_pct"] == 1.0
    assert again["preprocess"]["why"] == f"recorded with the resumed checkpoint {first['file'].split('/')[-1]}"
    # The weights' lineage is the one B recorded, not re-read from the file (it is gone).
    assert again["pretrained"]["sha256"] == started["pretrained"]["sha256"]
    assert again["pretrained"]["source"] == str(parent)
    manifest = json.loads((tmp_path / "resumed" / "checkpoints.json").read_text())
    assert manifest and all(e["weights"]["sha256"] == started["pretrained"]["sha256"] for e in manifest)
    assert not [w for w in of_type(evs, "warning") if w["code"].startswith(("pretrained", "preprocess"))]
    # The feature cache is keyed by the resumed backbone (A's frozen weights), so B's cache is found again,
    # not recomputed from the random initial weights a resume now starts from.
    b_cache = next(e["feature_cache"] for e in of_type(b_evs, "epoch_end") if "feature_cache" in e)
    cache = next(e["feature_cache"] for e in of_type(evs, "epoch_end") if "feature_cache" in e)
    assert cache["key"] == b_cache["key"] and cache["reused_from"], cache

    # A manifest entry without `weights`: the checkpoint's own record (run_record) still names them.
    entries = json.loads((tmp_path / "b" / "checkpoints.json").read_text())
    for e in entries:
        e.pop("weights", None)
    (tmp_path / "b" / "checkpoints.json").write_text(json.dumps(entries))
    code, out = resume_b_into("resumed-record")
    assert code == 0, out
    lineage = {k: started["pretrained"][k] for k in ("source", "file", "origin", "sha256")}
    assert of_type(events(tmp_path / "resumed-record"), "run_started")[0]["pretrained"] == lineage

    # A checkpoint of an older runner recorded neither: the run still says it started from
    # model.pretrained (here gone, so the name alone), not from random initialisation.
    import mindspore as ms

    ckpt = str(tmp_path / "b" / first["file"])
    ms.save_checkpoint([{"name": k, "data": v} for k, v in ms.load_checkpoint(ckpt).items() if k != "run_record"], ckpt)
    code, out = resume_b_into("resumed-old")
    assert code == 0, out
    assert of_type(events(tmp_path / "resumed-old"), "run_started")[0]["pretrained"] == {"source": str(parent)}
