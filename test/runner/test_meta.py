"""Runs you can tell apart: the `meta` command (name, notes, tags in meta.json) and what `ls` shows
of it (meta, display_name, health). No training: the runs are directories with a status.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import runner

from ascend_finetune import meta as M


def _run(root: Path, run_id: str, name: str, started: float, **status) -> Path:
    d = root / run_id
    d.mkdir(parents=True)
    st = {"run_id": run_id, "state": "completed", "pid": None, "host": None, "started_at": started, **status}
    (d / "status.json").write_text(json.dumps(st))
    (d / "spec.json").write_text(json.dumps({"name": name, "model": {"backbone": "resnet18"}}))
    return d


def _ls(root: Path) -> dict:
    code, out = runner("ls", str(root))
    assert code == 0, out
    return {r["run_id"]: r for r in out["runs"]}


def test_meta_sets_name_notes_and_tags_and_ls_shows_them(tmp_path):
    run = _run(tmp_path, "20261202-094922-flowers-e926", "flowers", 1.0)
    code, out = runner("meta", str(run))
    assert code == 0 and out == {
        "run_dir": str(run),
        "meta": {"name": None, "notes": "", "tags": [], "updated_at": None},
    }
    notes = "lr 0.01 baseline\nsecond line\twith a tab; ünïcode ✓"
    code, out = runner("meta", str(run), "--name", "  baseline  ", "--notes", notes, "--tag", "a", "--tag", "b")
    assert code == 0, out
    m = out["meta"]
    assert (m["name"], m["notes"], m["tags"]) == ("baseline", notes, ["a", "b"]) and m["updated_at"] > 0
    assert json.loads((run / "meta.json").read_text()) == m
    code, out = runner("meta", str(run), "--tag", "c", "--tag", "a", "--untag", "b", "--untag", "nope")
    assert out["meta"]["tags"] == ["a", "c"] and out["meta"]["name"] == "baseline", "only what is given changes"
    r = _ls(tmp_path)["20261202-094922-flowers-e926"]
    assert r["meta"]["name"] == "baseline" and r["meta"]["notes"] == notes and r["meta"]["tags"] == ["a", "c"]
    assert r["display_name"] == "baseline" and r["name"] == "flowers", "name stays the spec's"
    code, out = runner("meta", str(run), "--name", "")
    assert out["meta"]["name"] is None and _ls(tmp_path)[run.name]["display_name"] == "flowers"


@pytest.mark.parametrize(
    "args, field",
    [
        (["--name", "evil\u202egnp.exe"], "name"),  # a bidi override reorders what is shown
        (["--name", "two\nlines"], "name"),
        (["--name", "x" * 201], "name"),
        (["--tag", "ok", "--tag", "bell\x07"], "tags"),
        (["--tag", "t" * 65], "tags"),
        (["--tag", "   "], "tags"),
        (["--notes", "ansi \x1b[31mred"], "notes"),  # a terminal escape
        (["--notes", "é" * 5001], "notes"),  # 10,002 UTF-8 bytes
    ],
)
def test_a_hostile_or_oversized_value_is_refused_with_its_field_and_nothing_is_written(tmp_path, args, field):
    run = _run(tmp_path, "r1", "x", 1.0)
    runner("meta", str(run), "--name", "kept", "--tag", "kept")
    before = (run / "meta.json").read_bytes()
    code, out = runner("meta", str(run), *args)
    assert code == 2 and out["error"]["kind"] == "bad_input" and out["error"]["field"] == field, out
    assert (run / "meta.json").read_bytes() == before


def test_limits_are_inclusive_and_too_many_tags_are_refused(tmp_path):
    run = _run(tmp_path, "r1", "x", 1.0)
    m = M.update_meta(str(run), name="n" * 200, notes="é" * 5000, add_tags=[f"t{i}" for i in range(32)])
    assert len(m["name"]) == 200 and len(m["tags"]) == 32
    with pytest.raises(M.MetaError) as e:
        M.update_meta(str(run), add_tags=["one-more"])
    assert e.value.field == "tags"
    assert M.update_meta(str(run), add_tags=["t0"])["tags"][0] == "t0", "an existing tag is no change"


def test_meta_on_a_folder_that_is_not_a_run(tmp_path):
    code, out = runner("meta", str(tmp_path), "--name", "x")
    assert code == 2 and out["error"]["kind"] == "not_a_run"
    assert not (tmp_path / "meta.json").exists()


def test_display_names_add_the_run_id_suffix_only_where_names_clash(tmp_path):
    _run(tmp_path, "20261202-094922-t-e926", "t", 3.0)
    _run(tmp_path, "20261202-100000-t-0b1f", "t", 2.0)
    _run(tmp_path, "20261202-110000-other-aaaa", "other", 1.0)
    custom = _run(tmp_path, "my-run", "u", 0.5)  # train --run-dir: no hex suffix
    runner("meta", str(custom), "--name", "t")
    runs = _ls(tmp_path)
    assert runs["20261202-094922-t-e926"]["display_name"] == "t (e926)"
    assert runs["20261202-100000-t-0b1f"]["display_name"] == "t (0b1f)"
    assert runs["my-run"]["display_name"] == "t (my-run)", "renamed into the clash; its whole id"
    assert runs["20261202-110000-other-aaaa"]["display_name"] == "other"


def test_ls_health_comes_from_status_json_else_the_last_run_finished(tmp_path):
    health = {"verdict": "problems", "reasons": [{"code": "chance_level", "message": "m", "fix": "f"}]}
    _run(tmp_path, "a", "a", 3.0, health=health)
    b = _run(tmp_path, "b", "b", 2.0)  # a run of several ranks: the launcher wrote status.json
    (b / "events.jsonl").write_text(json.dumps({"v": 1, "seq": 1, "type": "run_finished", "health": health}) + "\n")
    _run(tmp_path, "c", "c", 1.0, state="running", health={"verdict": "healthy", "reasons": []}, pid=None)
    _run(tmp_path, "d", "d", 0.5, health="not an object")
    runs = _ls(tmp_path)
    assert runs["a"]["health"] == health and runs["b"]["health"] == health
    assert runs["d"]["health"] is None
    assert all("meta" in r and "display_name" in r for r in runs.values())


def test_a_hand_edited_meta_json_reads_as_unset_where_it_is_wrong(tmp_path):
    run = _run(tmp_path, "r1", "spec-name", 1.0)
    (run / "meta.json").write_text(json.dumps({"name": 5, "notes": ["x"], "tags": ["ok", 3, None], "updated_at": "x"}))
    r = _ls(tmp_path)["r1"]
    assert r["meta"] == {"name": None, "notes": "", "tags": ["ok"], "updated_at": None}
    assert r["display_name"] == "spec-name"
    (run / "meta.json").write_text("[1, 2")
    assert _ls(tmp_path)["r1"]["meta"]["tags"] == []
