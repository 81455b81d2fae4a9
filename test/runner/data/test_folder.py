"""The ImageFolder scan: its per-file verdict cache."""

from __future__ import annotations

import os


def test_image_scan_is_cached_and_rechecks_changed_files(tmp_path, monkeypatch):
    from PIL import Image

    from ascend_finetune.data import folder as data
    from ascend_finetune.data.demo import make_shapes

    monkeypatch.setenv("ASCEND_FINETUNE_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "set"
    make_shapes(str(root), per_class=5, size=32)
    decoded = []
    real = data._check_image
    monkeypatch.setattr(data, "_check_image", lambda p: decoded.append(p) or real(p))
    first = data.scan(str(root), 2)
    assert len(decoded) == 20 and len(first.samples) == 20
    decoded.clear()
    assert data.scan(str(root), 2).samples == first.samples
    assert decoded == [], "an unchanged set is not decoded again"
    victim = root / "red circle" / "0000.png"
    victim.write_bytes(victim.read_bytes()[:30])  # truncated since the last scan
    os.utime(victim, ns=(1, 1))
    third = data.scan(str(root), 2)
    assert decoded == [str(victim)]
    assert [p for p, _ in third.skipped] == [str(victim)] and len(third.samples) == 19
    Image.new("RGB", (32, 32)).save(victim)  # repaired
    assert len(data.scan(str(root), 2).samples) == 20


def test_a_fifo_named_like_an_image_is_skipped_not_a_hang(tmp_path, monkeypatch):
    # On a shared box anyone who can write to a class folder can plant one; opening it to decode
    # would wait for a writer for ever.
    import subprocess
    import sys

    monkeypatch.setenv("ASCEND_FINETUNE_CACHE", str(tmp_path / "cache"))
    from ascend_finetune.data.demo import make_shapes

    root = tmp_path / "set"
    make_shapes(str(root), per_class=3, size=32)
    fifo = root / "red circle" / "planted.jpg"
    os.mkfifo(fifo)
    code = (
        "import json, sys; from ascend_finetune.data.folder import scan; s = scan(sys.argv[1], 2); "
        "print(json.dumps({'n': len(s.samples), 'skipped': s.skipped}))"
    )
    from conftest import ROOT

    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"))
    r = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode == 0, r.stderr
    out = __import__("json").loads(r.stdout)
    assert out["n"] == 12
    assert [str(fifo), "not a regular file (a FIFO, device or folder named like an image)"] in out["skipped"]
