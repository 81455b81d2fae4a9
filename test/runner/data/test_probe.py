"""`probe PATH...`: what the editor learns about a spec's paths on a target, through the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT, runner


def _by_path(out):
    return {p["path"]: p for p in out["paths"]}


def test_probe_says_missing_file_and_folder_with_its_class_folders(tmp_path):
    data = tmp_path / "my data 日本"
    for name in ["b cls", "a", ".hidden", "c"]:
        (data / name).mkdir(parents=True)
    (data / "notes.txt").write_text("not a class")
    weights = tmp_path / "w.ckpt"
    weights.write_bytes(b"x" * 1234)
    missing = tmp_path / "nope"

    code, out = runner("probe", str(data), str(weights), str(missing))
    assert code == 0
    got = _by_path(out)
    assert list(got) == [str(data), str(weights), str(missing)], "one entry per path, in order"
    assert got[str(data)]["kind"] == "folder"
    assert got[str(data)]["classes"] == ["a", "b cls", "c"], "sorted, dot-folders and files skipped"
    assert got[str(data)]["count"] == 3
    assert got[str(weights)] == {"path": str(weights), "resolved": str(weights), "kind": "file", "bytes": 1234}
    assert got[str(missing)]["kind"] == "missing"


def test_probe_caps_the_class_list_but_counts_them_all(tmp_path):
    for i in range(12):
        (tmp_path / f"c{i:02d}").mkdir()
    code, out = runner("probe", str(tmp_path), "--max-classes", "5")
    assert code == 0
    entry = out["paths"][0]
    assert entry["classes"] == ["c00", "c01", "c02", "c03", "c04"]
    assert entry["count"] == 12


def test_probe_resolves_home_and_relative_paths_as_the_runner_opens_them(tmp_path):
    home = tmp_path / "home"
    (home / "data" / "x").mkdir(parents=True)
    (tmp_path / "rel").mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"), HOME=str(home))
    r = subprocess.run(
        [sys.executable, "-m", "ascend_finetune", "probe", "~/data", "rel", "./-odd"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    got = _by_path(json.loads(r.stdout))
    assert got["~/data"]["resolved"] == str(home / "data")
    assert got["~/data"]["classes"] == ["x"]
    assert got["rel"]["resolved"] == str(tmp_path / "rel") and got["rel"]["kind"] == "folder"
    assert got["./-odd"]["kind"] == "missing"


def test_probe_names_a_dangling_link_and_an_unreadable_folder(tmp_path):
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "gone")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "a").mkdir()
    locked.chmod(0)
    try:
        code, out = runner("probe", str(link), str(locked))
    finally:
        locked.chmod(0o755)
    assert code == 0
    got = _by_path(out)
    assert got[str(link)]["kind"] == "other"
    if os.geteuid() != 0:  # root reads any folder
        assert got[str(locked)]["kind"] == "folder" and got[str(locked)]["count"] == 0 and got[str(locked)]["error"]


def test_probe_does_not_load_mindspore(tmp_path):
    # A probe runs on every edit of a remote spec's path: it must start in a fraction of a second.
    code = (
        "import sys; from ascend_finetune.cli import main; main(['probe', '.']); "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'mindspore')))"
    )
    r = subprocess.run(
        [sys.executable, "-c", "import json; " + code],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "runner")),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[-1]) == []


def test_probe_counts_a_folders_images_and_reads_their_typical_size_from_the_headers(tmp_path):
    from PIL import Image

    data = tmp_path / "pets"
    # 3 classes, 7 images: PNG 40x30, JPEG 64x48, BMP 20x50 and GIF 33x33 (shorter sides 30, 48, 20, 33)
    sizes = {"cat": [("png", (40, 30)), ("jpg", (64, 48)), ("JPEG", (64, 48))], "dog": [("bmp", (20, 50))]}
    sizes["owl"] = [("gif", (33, 33)), ("png", (40, 30)), ("jpg", (64, 48))]
    for cls, files in sizes.items():
        (data / cls).mkdir(parents=True)
        for i, (ext, wh) in enumerate(files):
            Image.new("RGB", wh, (i * 40, 90, 200)).save(data / cls / f"{i}.{ext}")
    (data / "cat" / "notes.txt").write_text("not an image")
    os.mkfifo(data / "dog" / "stuck.jpg")  # counted by name, never opened for its size

    code, out = runner("probe", str(data))
    assert code == 0
    entry = out["paths"][0]
    assert entry["count"] == 3 and entry["images"] == 8
    assert entry["typical_size"] == 33, "median of 20, 30, 30, 33, 48, 48, 48"


def test_probe_of_an_empty_folder_has_no_images_and_no_size(tmp_path):
    (tmp_path / "a").mkdir()
    code, out = runner("probe", str(tmp_path))
    assert code == 0
    assert out["paths"][0]["images"] == 0 and out["paths"][0]["typical_size"] is None


def test_probe_of_a_runs_checkpoint_names_the_backbone_and_size_it_was_trained_with(tmp_path):
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    ckpt = run / "checkpoints" / "a-e1-s2.ckpt"
    ckpt.write_bytes(b"x" * 10)
    (run / "spec.json").write_text(json.dumps({"model": {"backbone": "resnet18"}, "data": {"image_size": 32}}))
    loose = tmp_path / "w.ckpt"
    loose.write_bytes(b"x")
    # a spec.json that is a symlink is not followed (run directories may be another user's)
    other = tmp_path / "other"
    (other / "checkpoints").mkdir(parents=True)
    (other / "checkpoints" / "b.ckpt").write_bytes(b"x")
    (other / "spec.json").symlink_to(run / "spec.json")

    code, out = runner("probe", str(ckpt), str(loose), str(other / "checkpoints" / "b.ckpt"))
    assert code == 0
    got = _by_path(out)
    assert got[str(ckpt)]["run"] == {"backbone": "resnet18", "image_size": 32}
    assert "run" not in got[str(loose)]
    assert "run" not in got[str(other / "checkpoints" / "b.ckpt")]
