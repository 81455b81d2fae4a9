"""`weights-status`: what the weights cache holds, for the editor's "cached on <target>", read as shared
ground (no symlink followed but to a folder, by you or root; regular files only; no request). Files come
from a weights host on 127.0.0.1 (weights_server.py) through the real download, so the record beside
each is the real one."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, runner
from weights_server import serve

from ascend_finetune.checkpoints.errors import PretrainedError
from ascend_finetune.models import cache_folder
from ascend_finetune.models.cache_status import catalog_sources, status
from ascend_finetune.models.catalog import MINDCV
from ascend_finetune.models.download import fetch

BODY = os.urandom(300_000)
R18 = "/" + MINDCV["resnet18"].path
HF = "/timm/resnet18.a1_in1k/resolve/main/model.safetensors"


@pytest.fixture
def host():
    state, server = serve()
    state.files[R18] = BODY
    state.files[HF] = BODY
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def env(tmp_path, host):
    return {
        "ASCEND_FINETUNE_CACHE": str(tmp_path / "cache"),
        "ASCEND_FINETUNE_WEIGHTS_URL": host.base,
        "HF_ENDPOINT": host.base,
    }


def one(value: str, env) -> dict:
    return status([value], env)["sources"][0]


def quiet(done: int, total: int | None) -> None:
    pass


def test_a_downloaded_file_is_cached_with_its_recorded_hash_and_a_missing_one_is_missing(env, host):
    got = fetch("mindcv:resnet18", env=env, progress=quiet)
    n = len(host.requests)
    doc = status(["mindcv:resnet18", "mindcv:resnet50"], env)
    assert len(host.requests) == n, "the listing made a request"
    cached, missing = doc["sources"]
    assert cached["state"] == "cached" and cached["path"] == got.path and cached["bytes"] == len(BODY)
    assert cached["sha256"] == hashlib.sha256(BODY).hexdigest()  # from the record, not hashed again
    assert cached["url"] == host.base + R18
    assert missing["state"] == "missing" and missing["bytes"] is None and missing["part_bytes"] == 0
    assert missing["url"] == host.base + "/" + MINDCV["resnet50"].path


def test_a_truncated_file_is_damaged_and_a_run_refuses_it(env):
    got = fetch("mindcv:resnet18", env=env, progress=quiet)
    with open(got.path, "r+b") as f:
        f.truncate(1000)
    s = one("mindcv:resnet18", env)
    assert s["state"] == "damaged" and s["bytes"] == 1000 and str(len(BODY)) in s["why"]
    with pytest.raises(PretrainedError, match="truncated or replaced; delete it"):
        fetch("mindcv:resnet18", env=env, progress=quiet)


def test_a_pinned_source_is_hashed_when_no_record_holds_it(env):
    fetch("hf-hub:timm/resnet18.a1_in1k", env=env, progress=quiet)
    good = hashlib.sha256(BODY).hexdigest()
    rec = os.path.join(env["ASCEND_FINETUNE_CACHE"], "weights/hf-hub/timm/resnet18.a1_in1k/main/model.safetensors")
    os.unlink(rec + ".sha256.json")
    assert one(f"hf-hub:timm/resnet18.a1_in1k#sha256={good}", env)["sha256_ok"] is True
    bad = one("hf-hub:timm/resnet18.a1_in1k#sha256=" + "0" * 64, env)
    assert bad["state"] == "damaged" and bad["sha256_ok"] is False and good in bad["why"]
    assert one("hf-hub:timm/resnet18.a1_in1k", env)["sha256"] is None  # nothing expected: not hashed


def test_a_planted_symlink_is_not_followed(env, tmp_path):
    secret = tmp_path / "secret.ckpt"
    secret.write_bytes(b"x" * 5000)
    folder = tmp_path / "cache" / "weights" / "mindcv"
    folder.mkdir(parents=True)
    (folder / "resnet18-1e65cd21.ckpt").symlink_to(secret)
    s = one("mindcv:resnet18", env)
    assert s["state"] == "unsafe" and s["bytes"] is None and "symbolic link" in s["why"]


@pytest.mark.parametrize("o_path", [True, False], ids=["linux", "no_o_path"])
def test_a_symlinked_folder_is_listed_as_the_download_treats_it(env, tmp_path, o_path, monkeypatch):
    """Followed when this user (or root) made the link, as a cache moved to a bigger disk is; another
    user's is unsafe, and the run refuses it too. Also without O_PATH (macOS)."""
    if not o_path:
        monkeypatch.setattr(cache_folder, "_O_PATH", 0)
    disk = tmp_path / "disk"
    disk.mkdir()
    (tmp_path / "cache").mkdir()
    link = tmp_path / "cache" / "weights"
    link.symlink_to(disk)
    got = fetch("mindcv:resnet18", env=env, progress=quiet)
    assert (disk / "mindcv" / "resnet18-1e65cd21.ckpt").read_bytes() == BODY
    s = one("mindcv:resnet18", env)
    assert s["state"] == "cached" and s["path"] == got.path and s["sha256"] == hashlib.sha256(BODY).hexdigest()
    with monkeypatch.context() as m:  # yours, but swapped while it was opened (cache_folder._open_trusted_link)
        m.setattr(cache_folder, "_open_trusted_link", lambda *args: None)
        s = one("mindcv:resnet18", env)
        assert (
            s["state"] == "unsafe"
            and s["why"] == "weights in the cache is a symlink that changed while it was read: not followed"
        )
    if os.geteuid() != 0:
        pytest.skip("only root can give a link to another owner")
    os.lchown(link, 12345, 12345)  # no such user here: another user's
    s = one("mindcv:resnet18", env)
    assert (
        s["state"] == "unsafe"
        and s["why"] == "weights in the cache is a symlink neither you nor root own: not followed"
    )
    with pytest.raises(PretrainedError) as e:
        fetch("mindcv:resnet18", env=env, progress=quiet)
    assert e.value.why == "cache_unsafe"


def test_a_fifo_does_not_hang_the_listing_and_a_part_file_is_reported(env, tmp_path):
    folder = tmp_path / "cache" / "weights" / "mindcv"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "resnet18-1e65cd21.ckpt")
    (folder / "resnet50-e0733ab8.ckpt.part").write_bytes(b"y" * 1234)
    fifo, part = status(["mindcv:resnet18", "mindcv:resnet50"], env)["sources"]
    assert fifo["state"] == "unsafe" and fifo["why"] == "not a regular file"
    assert part["state"] == "missing" and part["part_bytes"] == 1234


def test_the_command_lists_the_catalog_by_default_and_refuses_a_bad_name(env, monkeypatch):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    fetch("hf-hub:timm/resnet18.a1_in1k", env=env, progress=quiet)
    code, doc = runner("weights-status")
    assert code == 0 and [s["source"] for s in doc["sources"]] == catalog_sources()
    assert "mindcv:resnet152" not in catalog_sources()  # listed in the catalog, not loadable
    # The timm repositories the editor offers are listed too, after mindcv's.
    states = {s["source"]: s["state"] for s in doc["sources"]}
    assert states["hf-hub:timm/resnet18.a1_in1k"] == "cached"
    assert states["hf-hub:timm/vit_base_patch16_224.augreg2_in21k_ft_in1k"] == "missing"
    code, doc = runner("weights-status", "mindcv:resnet152")
    assert code == 2 and doc["error"]["kind"] == "bad_input"


def test_fetch_weights_progress_prints_json_lines_before_the_answer(env):
    r = subprocess.run(
        [sys.executable, "-m", "ascend_finetune", "fetch-weights", "--progress", "mindcv:resnet18"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env, "PYTHONPATH": str(ROOT / "runner")},
    )
    assert r.returncode == 0, r.stderr
    docs = [json.loads(ln) for ln in r.stdout.splitlines() if ln.strip()]
    progress = [d["progress"] for d in docs[:-1]]
    assert progress[0] == {"done": 0, "total": len(BODY)} and progress[-1] == {"done": len(BODY), "total": len(BODY)}
    assert docs[-1]["cached"] is False and docs[-1]["path"].endswith("resnet18-1e65cd21.ckpt")
