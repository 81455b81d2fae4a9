"""`mindcv:` and `hf-hub:` weight sources, downloaded from a weights host on 127.0.0.1 (weights_server.py)
that serves mindcv's URL layout (ASCEND_FINETUNE_WEIGHTS_URL) and the hub's resolve layout (HF_ENDPOINT).

The served files are real checkpoints: a mindcv ResNet-18 made by mindcv itself with random weights,
so "downloaded" is followed by "loads into the runner's backbone" and, in one case, a real CPU run.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
from conftest import ROOT, events, of_type, runner, spec, write_spec
from weights_server import serve

from ascend_finetune.checkpoints.errors import PretrainedError
from ascend_finetune.checkpoints.loading import preprocess_of
from ascend_finetune.checkpoints.tools import load_run
from ascend_finetune.models import cache_folder, download
from ascend_finetune.models.catalog import MINDCV, SourceError, parse
from ascend_finetune.models.download import Fetched, cache_path, fetch, fetch_hub_config
from ascend_finetune.models.net import TransferNet
from ascend_finetune.models.preprocess import MEAN, hub_values
from ascend_finetune.models.preprocess import resolve as resolve_preprocess
from ascend_finetune.models.pretrained import load_backbone, origin_of_file

MINDCV_PATH = "/" + MINDCV["resnet18"].path  # resnet/resnet18-1e65cd21.ckpt
HF_PATH = "/timm/resnet18.a1_in1k/resolve/main/model.safetensors"


@pytest.fixture(scope="module")
def mindcv_ckpt(tmp_path_factory) -> bytes:
    from mindcv.models import create_model

    net = create_model("resnet18", num_classes=1000, pretrained=False)
    path = tmp_path_factory.mktemp("cv") / "resnet18.ckpt"
    ms.save_checkpoint(net, str(path))
    return path.read_bytes()


@pytest.fixture
def host(mindcv_ckpt):
    state, server = serve()
    state.files[MINDCV_PATH] = mindcv_ckpt
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def env(tmp_path, host):
    return {"ASCEND_FINETUNE_CACHE": str(tmp_path / "cache"), "ASCEND_FINETUNE_WEIGHTS_URL": host.base}


def quiet(done: int, total: int | None) -> None:
    pass


def test_a_mindcv_name_downloads_into_the_cache_and_loads(env, host, mindcv_ckpt):
    seen: list[tuple[int, int | None]] = []
    got = fetch("mindcv:resnet18", env=env, progress=lambda d, t: seen.append((d, t)))
    assert got.downloaded and got.path == cache_path(parse("mindcv:resnet18"), env)
    assert got.path.endswith(os.path.join("weights", "mindcv", "resnet18-1e65cd21.ckpt"))
    assert open(got.path, "rb").read() == mindcv_ckpt
    assert got.sha256 == hashlib.sha256(mindcv_ckpt).hexdigest()
    assert got.url == host.base + MINDCV_PATH
    assert seen[-1] == (len(mindcv_ckpt), len(mindcv_ckpt))  # progress ends at the whole file
    # The host serves random weights under mindcv's name: their sha256 is not the one the name begins.
    assert got.name_hash == "1e65cd21" and got.name_hash_ok is False
    assert got.describe()["name_hash_ok"] is False
    assert not os.path.exists(got.path + ".part")
    assert origin_of_file(got.path) == ("mindcv", "default")
    net = TransferNet("resnet18", 3, 0, "default")
    report = load_backbone(net.backbone, got.path)
    assert not report.missing and not report.unexpected and not report.mismatched


def test_the_hash_a_mindcv_file_name_carries_is_checked_against_the_files_sha256():
    # mindcv names its files <model>-<first hex digits of their sha256>.ckpt (its configs/README.md).
    sha = "1e65cd21" + "0" * 56
    good = Fetched("/c/resnet18-1e65cd21.ckpt", "mindcv:resnet18", "http://m/r", sha, True, "1e65cd21")
    assert good.name_hash_ok is True and good.name_hash_warning() is None
    bad = Fetched("/c/resnet18-1e65cd21.ckpt", "mindcv:resnet18", "http://m/r", "f" * 64, True, "1e65cd21")
    w = bad.name_hash_warning()
    assert bad.name_hash_ok is False and w and w["code"] == "weights_name_hash_mismatch"
    assert "mindcv:resnet18#sha256=" + "f" * 64 in w["message"]  # the pin that accepts this very file
    assert parse("mindcv:densenet121").name_hash is None  # densenet121-120_5004_Ascend.ckpt: no hex
    assert parse("hf-hub:timm/resnet18.a1_in1k").name_hash is None
    assert "name_hash_ok" not in Fetched("/c/x", "hf-hub:timm/r", "u", sha, True).describe()


def test_a_cached_file_is_used_without_a_request(env, host):
    fetch("mindcv:resnet18", env=env, progress=quiet)
    n = len(host.requests)
    again = fetch("mindcv:resnet18", env=env, progress=quiet)
    assert not again.downloaded and len(host.requests) == n


def test_a_hash_mismatch_is_refused_and_nothing_stays_in_the_cache(env, host, mindcv_ckpt):
    wrong = "0" * 64
    with pytest.raises(PretrainedError) as e:
        fetch(f"mindcv:resnet18#sha256={wrong}", env=env, progress=quiet)
    actual = hashlib.sha256(mindcv_ckpt).hexdigest()
    assert wrong in str(e.value) and actual in str(e.value)
    dest = cache_path(parse("mindcv:resnet18"), env)
    assert [n for n in os.listdir(os.path.dirname(dest)) if not n.endswith(".lock")] == []
    # The right pin passes.
    assert fetch(f"mindcv:resnet18#sha256={actual}", env=env, progress=quiet).sha256 == actual


@pytest.mark.parametrize("validator", ["etag", "last_modified", "none"])
def test_a_download_cut_half_way_is_resumed_with_a_range_request(env, host, mindcv_ckpt, validator):
    """Within one download the rest is asked for even from a host that gives no validator (neither
    ETag nor Last-Modified): its start and size are checked against the answer this download began."""
    host.etag = validator == "etag"
    host.last_modified = "Mon, 07 Dec 2026 06:51:50 GMT" if validator == "last_modified" else None
    host.cut_first = True
    got = fetch("mindcv:resnet18", env=env, progress=quiet)
    assert open(got.path, "rb").read() == mindcv_ckpt
    assert got.sha256 == hashlib.sha256(mindcv_ckpt).hexdigest()
    assert [r for _, r in host.requests] == [None, f"bytes={len(mindcv_ckpt) // 2}-"]


def test_without_a_validator_a_rest_of_another_size_than_the_download_began_starts_over(env, host, mindcv_ckpt):
    host.etag, host.cut_first = False, True
    n = len(mindcv_ckpt)
    host.content_range = f"bytes {n // 2}-{n}/{n + 1}"  # the rest of a file one byte longer
    got = fetch("mindcv:resnet18", env=env, progress=quiet)
    assert open(got.path, "rb").read() == mindcv_ckpt
    assert [r for _, r in host.requests] == [None, f"bytes={n // 2}-", None]


class Killed(BaseException):
    """The process killed mid-way (a BaseException: nothing in the download may catch it)."""


def killed_after_the_first_bytes(done: int, total: int | None) -> None:
    if done:
        raise Killed


@pytest.mark.parametrize("change", ["none", "file", "mirror", "no_etag"])
def test_a_partial_file_is_resumed_only_while_the_same_url_serves_the_same_file(
    env, host, mindcv_ckpt, change, request
):
    host.etag = change != "no_etag"
    with pytest.raises(Killed):
        fetch("mindcv:resnet18", env=env, progress=killed_after_the_first_bytes)
    kept = os.path.getsize(cache_path(parse("mindcv:resnet18"), env) + ".part")
    assert 0 < kept < len(mindcv_ckpt)
    want, asked = mindcv_ckpt, host
    if change == "file":  # a new `main` on the hub: as long, other bytes
        want = host.files[MINDCV_PATH] = mindcv_ckpt[::-1]
    if change == "mirror":
        asked, server = serve()
        request.addfinalizer(server.server_close)
        request.addfinalizer(server.shutdown)
        asked.files[MINDCV_PATH] = mindcv_ckpt
        env = dict(env, ASCEND_FINETUNE_WEIGHTS_URL=asked.base)
    got = fetch("mindcv:resnet18", env=env, progress=quiet)
    assert open(got.path, "rb").read() == want and got.sha256 == hashlib.sha256(want).hexdigest()
    # The rest is asked for only where the file can be told the same; a changed one comes whole.
    resumed = change in ("none", "file")
    assert asked.requests[-1] == (MINDCV_PATH, f"bytes={kept}-" if resumed else None)


@pytest.mark.parametrize("told_by", ["etag", "size"])
def test_a_host_that_ignores_if_range_does_not_get_two_files_joined(env, host, mindcv_ckpt, told_by):
    """A proxy that honours Range but drops If-Range serves the rest of a changed file; its ETag, or
    without one its size, is not the one that began the .part, so the download starts over."""
    host.etag = told_by == "etag"
    host.last_modified = "Mon, 07 Dec 2026 06:51:50 GMT"  # a date that stays while the file changes
    with pytest.raises(Killed):
        fetch("mindcv:resnet18", env=env, progress=killed_after_the_first_bytes)
    kept = os.path.getsize(cache_path(parse("mindcv:resnet18"), env) + ".part")
    # The same length with an ETag (the ETag tells it); without one, another length (the size does).
    new = mindcv_ckpt[::-1] if told_by == "etag" else mindcv_ckpt[::-1] + b"more"
    host.files[MINDCV_PATH], host.ignore_if_range = new, True
    got = fetch("mindcv:resnet18", env=env, progress=quiet)
    assert open(got.path, "rb").read() == new and got.sha256 == hashlib.sha256(new).hexdigest()
    assert host.requests[1:] == [(MINDCV_PATH, f"bytes={kept}-"), (MINDCV_PATH, None)]


def test_a_malformed_content_range_is_a_coded_error_and_the_next_run_downloads_the_file_whole(env, host, mindcv_ckpt):
    with pytest.raises(Killed):
        fetch("mindcv:resnet18", env=env, progress=killed_after_the_first_bytes)
    part = cache_path(parse("mindcv:resnet18"), env) + ".part"
    host.content_range = "bytes 1-2/abc"
    with pytest.raises(PretrainedError) as e:
        fetch("mindcv:resnet18", env=env, progress=quiet)
    assert e.value.why == "download_bad_range" and e.value.params["content_range"] == "bytes 1-2/abc"
    assert "malformed Content-Range 'bytes 1-2/abc'" in str(e.value) and not os.path.exists(part)
    got = fetch("mindcv:resnet18", env=env, progress=quiet)
    assert open(got.path, "rb").read() == mindcv_ckpt and host.requests[-1] == (MINDCV_PATH, None)


def test_a_kill_while_a_new_part_begins_leaves_no_record_vouching_for_the_old_bytes(
    env, host, mindcv_ckpt, monkeypatch
):
    with pytest.raises(Killed):
        fetch("mindcv:resnet18", env=env, progress=killed_after_the_first_bytes)
    new = host.files[MINDCV_PATH] = mindcv_ckpt[::-1]  # changed on the host: it is sent whole (If-Range)
    write = download.Folder.write

    def killed_once_recorded(self, name, data):
        write(self, name, data)
        if name.endswith(".part.json"):
            raise Killed

    monkeypatch.setattr(download.Folder, "write", killed_once_recorded)
    with pytest.raises(Killed):
        fetch("mindcv:resnet18", env=env, progress=quiet)
    monkeypatch.undo()
    got = fetch("mindcv:resnet18", env=env, progress=quiet)
    # The old file's bytes went before the new file's record was written: nothing of them is resumed.
    assert open(got.path, "rb").read() == new and host.requests[-1] == (MINDCV_PATH, None)


def test_a_whole_part_left_before_the_rename_is_checked_and_used_without_downloading_it_again(
    env, host, mindcv_ckpt, monkeypatch
):
    rename = os.replace

    def killed_before_the_rename(a, b, **kw):
        if str(a).endswith(".ckpt.part"):
            raise Killed
        return rename(a, b, **kw)

    monkeypatch.setattr(os, "replace", killed_before_the_rename)
    with pytest.raises(Killed):
        fetch("mindcv:resnet18", env=env, progress=quiet)
    monkeypatch.undo()
    got = fetch("mindcv:resnet18", env=env, progress=quiet)
    assert got.downloaded and got.sha256 == hashlib.sha256(mindcv_ckpt).hexdigest()
    n = len(mindcv_ckpt)  # the host answers "nothing past the end" (416): the file is not sent again
    assert host.requests == [(MINDCV_PATH, None), (MINDCV_PATH, f"bytes={n}-")]


def test_a_host_lost_after_bytes_arrived_says_the_download_resumes_not_that_there_is_no_internet(tmp_path, mindcv_ckpt):
    state, server = serve()
    state.files[MINDCV_PATH], state.cut_first = mindcv_ckpt, True
    env = {"ASCEND_FINETUNE_CACHE": str(tmp_path / "c"), "ASCEND_FINETUNE_WEIGHTS_URL": state.base}

    def host_goes_away(done: int, total: int | None) -> None:
        if done and server.socket.fileno() != -1:
            server.shutdown()
            server.server_close()

    with pytest.raises(PretrainedError) as e:
        fetch("mindcv:resnet18", env=env, progress=host_goes_away)
    part = cache_path(parse("mindcv:resnet18"), env) + ".part"
    assert e.value.why == "download_interrupted" and e.value.params["part"] == part
    assert "interrupted" in str(e.value) and "the next run resumes it" in str(e.value)
    assert "without internet" not in str(e.value)
    assert os.path.getsize(part) == len(mindcv_ckpt) // 2


FETCH = """
import json, sys
from ascend_finetune.models.download import fetch
got = fetch(sys.argv[1])
print(json.dumps([got.downloaded, got.sha256]))
"""


def test_processes_fetching_one_source_at_once_share_one_download(env, host, mindcv_ckpt):
    """Every msrun rank, and each sweep trial, fetches its weights as it starts."""
    host.delay_s = 0.5  # the downloads overlap
    penv = dict(os.environ, **env, PYTHONPATH=str(ROOT / "runner"))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", FETCH, "mindcv:resnet18"], env=penv, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err[-600:] for _, err in outs]
    got = [json.loads(out) for out, _ in outs]
    # One downloads; the others wait for it and use its file.
    assert sorted(downloaded for downloaded, _ in got) == [False, False, False, True]
    assert {sha for _, sha in got} == {hashlib.sha256(mindcv_ckpt).hexdigest()}
    assert len(host.requests) == 1


HOLD_LOCK = """
import fcntl, os, sys, time
lock, writes = sys.argv[1], int(sys.argv[2])
os.makedirs(os.path.dirname(lock), exist_ok=True)
fd = os.open(lock, os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
for _ in range(writes):  # a download going on: its .part grows, then it lets go
    with open(lock[: -len(".lock")] + ".part", "ab") as f:
        f.write(b"x")
    time.sleep(0.1)
time.sleep(0 if writes else 120)  # none: stuck, as on a dead ssh link
"""


@pytest.fixture
def lock_holder(request):
    """Starts a process that holds `<dest>.lock`, writing `writes` bytes to its .part 0.1 s apart."""
    procs: list[subprocess.Popen] = []

    def start(dest: str, writes: int) -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, dest + ".lock", str(writes)], stdout=subprocess.PIPE)
        procs.append(p)
        assert p.stdout and p.stdout.readline() == b"held\n"
        return p

    yield start
    for p in procs:
        p.kill()
        p.wait()


def test_a_download_another_process_holds_without_progress_fails_with_how_to_find_it(
    env, host, mindcv_ckpt, lock_holder, monkeypatch
):
    monkeypatch.setattr(download, "LOCK_STALL_S", 1.0)
    monkeypatch.setattr(download, "LOCK_POLL_S", 0.1)
    dest = cache_path(parse("mindcv:resnet18"), env)
    holder = lock_holder(dest, 0)
    with pytest.raises(PretrainedError) as e:
        fetch("mindcv:resnet18", env=env, progress=quiet)
    assert e.value.why == "download_locked" and e.value.params == {
        "source": "mindcv:resnet18",
        "lock": dest + ".lock",
        "waited_s": 1.0,
    }
    assert f"fuser -v {dest}.lock" in str(e.value) and "removing the file does not help" in str(e.value)
    assert sorted(os.listdir(os.path.dirname(dest))) == [os.path.basename(dest) + ".lock"] and host.requests == []
    # The lock ends with its process.
    holder.kill()
    holder.wait()
    assert open(fetch("mindcv:resnet18", env=env, progress=quiet).path, "rb").read() == mindcv_ckpt


def test_a_download_another_process_is_making_progress_on_is_waited_for_past_the_stall_time(
    env, host, mindcv_ckpt, lock_holder, monkeypatch
):
    monkeypatch.setattr(download, "LOCK_STALL_S", 1.0)
    monkeypatch.setattr(download, "LOCK_POLL_S", 0.1)
    dest = cache_path(parse("mindcv:resnet18"), env)
    lock_holder(dest, 30)  # 3 s of a growing .part
    got = fetch("mindcv:resnet18", env=env, progress=quiet)
    # Its .part carries no record of where it came from: it is not resumed.
    assert open(got.path, "rb").read() == mindcv_ckpt and host.requests == [(MINDCV_PATH, None)]


@pytest.mark.parametrize(
    "link, owner",
    [
        ("weights", "mine"),
        ("weights/mindcv", "mine"),
        ("weights", "root"),
        ("weights", "other"),
        ("weights/mindcv", "other"),
    ],
)
@pytest.mark.parametrize("o_path", [True, False], ids=["linux", "no_o_path"])
def test_a_symlinked_folder_in_the_cache_is_followed_only_when_this_user_or_root_made_it(
    tmp_path, env, host, mindcv_ckpt, link, owner, o_path, monkeypatch
):
    """A cache moved to a bigger disk through a symlink works; another user's link, perhaps planted in a
    shared cache, is refused and nothing goes through it. Also without O_PATH (macOS), where the link is
    checked around the open instead of through a descriptor of it."""
    if not o_path:
        monkeypatch.setattr(cache_folder, "_O_PATH", 0)
    cache, elsewhere = Path(env["ASCEND_FINETUNE_CACHE"]), tmp_path / "elsewhere"
    elsewhere.mkdir()
    if owner == "other":  # a file planted where the link leads, under the cached file's name
        (elsewhere / "resnet18-1e65cd21.ckpt").write_bytes(b"planted")
    (cache / link).parent.mkdir(parents=True)
    (cache / link).symlink_to(elsewhere)
    if owner != "mine":
        if os.geteuid() != 0:
            pytest.skip("only root can give a link to another owner")
        uid = 0 if owner == "root" else 12345  # no such user here: another user's
        os.lchown(cache / link, uid, uid)
    before = sorted(elsewhere.rglob("*"))
    if owner == "other":
        with pytest.raises(PretrainedError) as e:
            fetch("mindcv:resnet18", env=env, progress=quiet)
        assert e.value.why == "cache_unsafe" and f"{cache / link} in the weights cache is a symlink" in str(e.value)
        assert "set ASCEND_FINETUNE_CACHE to a folder there" in str(e.value)
        assert sorted(elsewhere.rglob("*")) == before and host.requests == []
        return
    got = fetch("mindcv:resnet18", env=env, progress=quiet)
    assert got.downloaded and got.path == str(cache / "weights" / "mindcv" / "resnet18-1e65cd21.ckpt")
    landed = elsewhere / ("mindcv" if link == "weights" else "") / "resnet18-1e65cd21.ckpt"
    assert landed.read_bytes() == mindcv_ckpt
    assert not fetch("mindcv:resnet18", env=env, progress=quiet).downloaded


@pytest.mark.parametrize("after", ["kept", "swapped_back"])
def test_without_o_path_a_link_swapped_while_it_is_opened_is_refused(tmp_path, monkeypatch, after):
    """Off Linux the link is checked, opened through, and checked again: another user's link put in its
    place just before the open (yours renamed away) is refused, whether it stays (its owner) or yours is
    put back at once (yours no longer leads to the folder opened)."""
    if os.geteuid() != 0:
        pytest.skip("only root can give a link to another owner")
    mine, theirs, link, away = tmp_path / "mine", tmp_path / "theirs", tmp_path / "weights", tmp_path / "away"
    mine.mkdir()
    theirs.mkdir()
    link.symlink_to(mine)
    real_open, real_stat = os.open, os.stat

    def swapped_before_the_open(path, flags, *args, **kw):
        if path == "weights" and not flags & os.O_NOFOLLOW:
            os.rename(link, away)
            link.symlink_to(theirs)
            os.lchown(link, 12345, 12345)
        return real_open(path, flags, *args, **kw)

    def swapped_back_after_it(path, *args, **kw):
        if path == "weights" and os.path.lexists(away):
            os.unlink(link)
            os.rename(away, link)
        return real_stat(path, *args, **kw)

    root = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = cache_folder.open_subfolder(root, "weights")  # untouched: followed as on Linux
        assert os.path.samestat(os.fstat(fd), os.stat(mine))
        os.close(fd)
        monkeypatch.setattr(cache_folder, "_O_PATH", 0)
        fd = cache_folder.open_subfolder(root, "weights")  # untouched: followed without O_PATH too
        assert os.path.samestat(os.fstat(fd), os.stat(mine))
        os.close(fd)
        monkeypatch.setattr(os, "open", swapped_before_the_open)
        if after == "swapped_back":
            monkeypatch.setattr(os, "stat", swapped_back_after_it)
        with pytest.raises(OSError) as e:
            cache_folder.open_subfolder(root, "weights")
        monkeypatch.undo()
    finally:
        os.close(root)
    assert e.value.errno in (errno.ELOOP, errno.ENOTDIR)
    assert os.readlink(link) == str(mine if after == "swapped_back" else theirs)


def test_without_fcntl_a_download_goes_without_the_lock(env, host, mindcv_ckpt, monkeypatch):
    monkeypatch.setattr(download, "fcntl", None)
    got = fetch("mindcv:resnet18", env=env, progress=quiet)
    assert got.downloaded and open(got.path, "rb").read() == mindcv_ckpt
    assert not os.path.exists(got.path + ".lock")


WINDOWS_IMPORT = """
import os, sys
sys.modules["fcntl"] = None  # no such module: import fails
for flag in ("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC", "O_PATH", "O_DIRECTORY"):
    if hasattr(os, flag):
        delattr(os, flag)
del os.getuid
from ascend_finetune.models import cache_folder, cache_status, download
assert download.fcntl is None and not cache_folder.trusted_owner(0)
print("imported")
"""


def test_the_download_and_cache_modules_import_without_fcntl_and_posix_open_flags():
    """As on Windows, where the extension's "Download on this machine" runs fetch-weights and weights-status."""
    penv = dict(os.environ, PYTHONPATH=str(ROOT / "runner"))
    out = subprocess.run([sys.executable, "-c", WINDOWS_IMPORT], env=penv, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "imported", out.stderr


def test_offline_names_the_source_the_cache_path_and_the_air_gapped_fix(tmp_path):
    with socket.socket() as s:  # a port nothing listens on: connection refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {"ASCEND_FINETUNE_CACHE": str(tmp_path / "c"), "ASCEND_FINETUNE_WEIGHTS_URL": f"http://127.0.0.1:{port}"}
    with pytest.raises(PretrainedError) as e:
        fetch("mindcv:resnet50", env=env, progress=quiet)
    msg = str(e.value)
    assert "mindcv:resnet50" in msg and "ConnectionRefusedError" in msg
    assert cache_path(parse("mindcv:resnet50"), env) in msg
    assert "Copy Weights to Target" in msg and 'model.preprocess to "mindcv"' in msg  # a copy elsewhere keeps it


def test_hf_endpoint_is_respected_and_hf_hub_offline_forbids_the_request(tmp_path, host, mindcv_ckpt):
    host.files[HF_PATH] = mindcv_ckpt  # the hub serves any bytes; the layout is what is tested
    env = {"ASCEND_FINETUNE_CACHE": str(tmp_path / "c"), "HF_ENDPOINT": host.base + "/"}
    offline = dict(env, HF_HUB_OFFLINE="1")
    with pytest.raises(PretrainedError, match="HF_HUB_OFFLINE"):
        fetch("hf-hub:timm/resnet18.a1_in1k", env=offline, progress=quiet)
    assert host.requests == []
    got = fetch("hf-hub:timm/resnet18.a1_in1k", env=env, progress=quiet)
    assert host.requests == [(HF_PATH, None)] and got.url == host.base + HF_PATH
    assert got.path.endswith(os.path.join("hf-hub", "timm", "resnet18.a1_in1k", "main", "model.safetensors"))
    # Once cached, offline mode is served from the cache.
    assert fetch("hf-hub:timm/resnet18.a1_in1k", env=offline, progress=quiet).path == got.path


HF_CONFIG = "/timm/vit_base_patch32_224.augreg_in21k_ft_in1k/resolve/main/config.json"
VIT = "hf-hub:timm/vit_base_patch32_224.augreg_in21k_ft_in1k"
VIT_CFG = {"mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5], "crop_pct": 0.9, "interpolation": "bicubic"}


def _resolve(setting, env):
    warned: list[dict] = []
    p = resolve_preprocess(setting, VIT, "torch", lambda **w: warned.append(w), env)
    return p, warned


def test_a_hub_configs_preprocessing_comes_beside_the_weights_and_is_cached(tmp_path, host):
    host.files[HF_CONFIG] = json.dumps({"architecture": "vit", "pretrained_cfg": VIT_CFG}).encode()
    env = {"ASCEND_FINETUNE_CACHE": str(tmp_path / "c"), "HF_ENDPOINT": host.base}
    p, warned = _resolve("auto", env)
    assert warned == [] and host.requests == [(HF_CONFIG, None)]
    assert (p.mean, p.crop_pct, p.source, p.config) == ((127.5,) * 3, 0.9, "hub_config", host.base + HF_CONFIG)
    cached = tmp_path / "c" / "weights" / "hf-hub" / "timm" / HF_CONFIG.split("/")[2] / "main" / "config.json"
    assert cached.read_bytes() == host.files[HF_CONFIG]  # beside where the weights go
    # Cached: no request, offline too.
    again, warned = _resolve("auto", dict(env, HF_HUB_OFFLINE="1"))
    assert again == p and warned == [] and len(host.requests) == 1
    # A named preset does not ask the hub.
    assert _resolve("timm", dict(env, ASCEND_FINETUNE_CACHE=str(tmp_path / "d")))[0].mean == MEAN
    assert len(host.requests) == 1


@pytest.mark.parametrize(
    "served, code",
    [
        (None, "preprocess_config_missing"),  # 404
        (
            json.dumps({"pretrained_cfg": {**VIT_CFG, "mean": [0.5, 0.5, 0.5, 0.5]}}).encode(),
            "preprocess_config_invalid",
        ),
        (b'{"pretrained_cfg": ' + b"1" * (100 << 10) + b"}", "preprocess_config_invalid"),  # read 64 KB + 1 only
    ],
)
def test_a_missing_or_hostile_hub_config_falls_back_to_the_timm_preset_with_a_warning(tmp_path, host, served, code):
    if served is not None:
        host.files[HF_CONFIG] = served
    env = {"ASCEND_FINETUNE_CACHE": str(tmp_path / "c"), "HF_ENDPOINT": host.base}
    p, warned = _resolve("auto", env)
    assert (p.name, p.mean, p.crop_pct, p.interpolation, p.source) == ("timm", MEAN, 0.95, "bicubic", "preset")
    assert [w["code"] for w in warned] == [code]
    assert host.base + HF_CONFIG in warned[0]["message"] and warned[0]["details"]["config"] == host.base + HF_CONFIG
    assert not (
        tmp_path / "c" / "weights" / "hf-hub" / "timm" / HF_CONFIG.split("/")[2] / "main" / "config.json"
    ).exists()
    # The spec's own fields still apply on top of the fallback.
    q, _ = _resolve({"mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5]}, env)
    assert (q.mean, q.std, q.crop_pct, q.overridden) == ((127.5,) * 3, (127.5,) * 3, 0.95, ("mean", "std"))


def test_weights_trained_at_another_size_than_the_crop_say_so(tmp_path, host):
    host.files[HF_CONFIG] = json.dumps({"pretrained_cfg": {**VIT_CFG, "input_size": [3, 240, 240]}}).encode()
    env = {"ASCEND_FINETUNE_CACHE": str(tmp_path / "c"), "HF_ENDPOINT": host.base}
    warned: list[dict] = []
    p = resolve_preprocess("auto", VIT, "torch", lambda **w: warned.append(w), env, image_size=224)
    assert p.input_size == 240 and [w["code"] for w in warned] == ["preprocess_input_size"]
    assert warned[0]["details"] == {"input_size": 240, "image_size": 224}
    assert resolve_preprocess("auto", VIT, "torch", lambda **w: pytest.fail(str(w)), env, image_size=240) == p


def test_offline_without_a_cached_config_asks_nothing_and_says_so(tmp_path, host):
    host.files[HF_CONFIG] = json.dumps({"pretrained_cfg": VIT_CFG}).encode()
    env = {"ASCEND_FINETUNE_CACHE": str(tmp_path / "c"), "HF_ENDPOINT": host.base, "HF_HUB_OFFLINE": "1"}
    p, warned = _resolve("auto", env)
    assert host.requests == [] and p.source == "preset"
    assert [w["code"] for w in warned] == ["preprocess_config_missing"] and "HF_HUB_OFFLINE" in warned[0]["message"]


@contextlib.contextmanager
def read_only(folder: Path):
    """`folder` as on a shared cache mounted read-only; for root, whom modes do not stop, a bind mount."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if subprocess.run(["mount", "--bind", "-o", "ro", folder, folder], capture_output=True).returncode:
        pytest.skip("running as root without mount: a read-only folder cannot be made")
    try:
        yield
    finally:
        subprocess.run(["umount", folder], check=True)


def test_a_read_only_cache_with_the_weights_but_no_config_runs_with_the_preset_and_says_why(tmp_path, host):
    host.files[HF_CONFIG.replace("config.json", "model.safetensors")] = b"weights bytes"
    env = {"ASCEND_FINETUNE_CACHE": str(tmp_path / "c"), "HF_ENDPOINT": host.base}
    folder = Path(fetch(VIT, env=env, progress=quiet).path).parent  # filled by someone who could write
    host.files[HF_CONFIG] = json.dumps({"pretrained_cfg": VIT_CFG}).encode()
    with read_only(folder):
        assert not fetch(VIT, env=env, progress=quiet).downloaded
        p, warned = _resolve("auto", env)
    assert p.source == "preset" and [w["code"] for w in warned] == ["preprocess_config_missing"]
    assert f"cannot be cached at {folder / 'config.json'}" in warned[0]["message"]


def test_the_hub_config_is_not_written_through_a_symlink_planted_beside_it(tmp_path, host):
    host.files[HF_CONFIG] = json.dumps({"pretrained_cfg": VIT_CFG}).encode()
    env = {"ASCEND_FINETUNE_CACHE": str(tmp_path / "c"), "HF_ENDPOINT": host.base}
    folder = tmp_path / "c" / "weights" / "hf-hub" / "timm" / HF_CONFIG.split("/")[2] / "main"
    folder.mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.write_text("mine")
    # The name this config was once written to first, and the config's own name.
    (folder / f"config.json.{os.getpid()}.tmp").symlink_to(victim)
    (folder / "config.json").symlink_to(victim)
    got = fetch_hub_config(parse(VIT), hub_values, env)
    assert got.problem is None and got.data == host.files[HF_CONFIG]
    assert victim.read_text() == "mine" and (folder / "config.json").read_bytes() == host.files[HF_CONFIG]


def test_a_missing_file_on_the_host_is_a_clear_http_error(tmp_path, host):
    env = {"ASCEND_FINETUNE_CACHE": str(tmp_path / "c"), "ASCEND_FINETUNE_WEIGHTS_URL": host.base}
    with pytest.raises(PretrainedError, match=r"HTTP 404.*mirror"):
        fetch("mindcv:resnet34", env=env, progress=quiet)


@pytest.mark.parametrize(
    "value, words",
    [
        ("mindcv:resnet5", ['did you mean "mindcv:resnet50"']),
        ("mindcv:resnext50_32x4d", ["resnext", "does not offer", "docs/weights.md"]),
        ("hf-hub:timm/swin_tiny_patch4_window7_224.ms_in1k", ["not a timm architecture", "convnext_tiny"]),
        ("hf-hub:resnet50", ["hf-hub:<org>/<repo>"]),
        ("hf-hub:timm/resnet50.a1_in1k:../../etc/passwd", ["bad file name"]),
        ("mindcv:resnet50#md5=abc", ["#sha256="]),
    ],
)
def test_names_the_catalog_cannot_load_are_refused_with_a_fix(value, words):
    with pytest.raises(SourceError) as e:
        parse(value)
    text = f"{e.value} {e.value.fix}"
    assert all(w in text for w in words), text


def test_validate_checks_the_name_and_the_backbone_without_any_download(tmp_path, data_a):
    s = spec(data_a, model={"backbone": "resnet50", "pretrained": "mindcv:resnet18"})
    code, doc = runner("validate", str(write_spec(tmp_path / "s.json", s)))
    assert code == 2
    assert doc["problems"] == [
        {
            "path": "model.pretrained",
            "message": "mindcv:resnet18 holds resnet18 weights but model.backbone is resnet50",
            "fix": 'set model.backbone to "resnet18", or pick resnet50 weights: mindcv:resnet50, '
            "hf-hub:timm/resnet50.a1_in1k, hf-hub:timm/resnet50.d_in1k (19 in all: completion and "
            "`weights-status` list them)",
        }
    ]
    s["model"]["backbone"] = "resnet18"
    code, doc = runner("validate", str(write_spec(tmp_path / "s.json", s)))
    assert code == 0, doc


@pytest.mark.parametrize(
    ("backbone", "value", "said", "fix"),
    [
        # mindcv has no ViT-B/16 file: the nearest name was its ViT-B/32, which validate then refused.
        (
            "vit_b_16_224",
            "mindcv:vit_b_16_224",
            "mindcv publishes no vit_b_16_224 weights",
            "pick vit_b_16_224 weights: hf-hub:timm/vit_base_patch16_224.",
        ),
        ("resnest14", "mindcv:resnest14", "mindcv publishes no resnest14 weights", "no named source has them"),
        ("resnet18", "mindcv:resnet81", "no model 'resnet81'", 'did you mean "mindcv:resnet18"?'),
        # Names that exist but load into no offered backbone: the fix listed every other architecture.
        ("resnet50", "mindcv:resnet152", "does not offer as a backbone", "pick resnet50 weights: mindcv:resnet50,"),
        (
            "resnet50",
            "hf-hub:timm/resnet152.a1_in1k",
            "not a timm architecture",
            "pick resnet50 weights: mindcv:resnet50,",
        ),
    ],
)
def test_validate_offers_only_the_backbones_own_weights(tmp_path, data_a, backbone, value, said, fix):
    s = spec(data_a, model={"backbone": backbone, "pretrained": value})
    code, doc = runner("validate", str(write_spec(tmp_path / "s.json", s)))
    (p,) = [p for p in doc["problems"] if p["path"] == "model.pretrained"]
    assert code == 2 and said in p["message"] and fix in p["fix"], p


def test_an_unknown_backbone_is_one_problem_not_two(tmp_path, data_a):
    s = spec(data_a, model={"backbone": "resnet19", "pretrained": "mindcv:resnet18"})
    code, doc = runner("validate", str(write_spec(tmp_path / "s.json", s)))
    assert code == 2 and [p["path"] for p in doc["problems"]] == ["model.backbone"], doc


def test_a_run_with_a_mindcv_name_downloads_loads_and_reports_the_source(tmp_path, data_a, host, mindcv_ckpt):
    cache = tmp_path / "cache"
    s = spec(data_a, model={"pretrained": "mindcv:resnet18", "freeze": "backbone"}, train={"epochs": 1})
    old = {k: os.environ.get(k) for k in ("ASCEND_FINETUNE_CACHE", "ASCEND_FINETUNE_WEIGHTS_URL")}
    os.environ.update(ASCEND_FINETUNE_CACHE=str(cache), ASCEND_FINETUNE_WEIGHTS_URL=host.base)
    try:
        code, out = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(tmp_path / "run"))
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    assert code == 0, out
    evs = events(tmp_path / "run")
    started = of_type(evs, "run_started")[0]
    p = started["pretrained"]
    assert p["source"] == "mindcv:resnet18" and p["origin"] == "mindcv" and p["cached"] is False
    # The download's progress came as `setup` events, before run_started, ending at the whole file.
    setup = of_type(evs, "setup")
    assert setup and all(e["stage"] == "download" and e["source"] == "mindcv:resnet18" for e in setup)
    assert setup[-1]["done"] == setup[-1]["total"] == len(mindcv_ckpt)
    assert evs.index(setup[-1]) < evs.index(started)
    assert p["sha256"] == hashlib.sha256(mindcv_ckpt).hexdigest()
    assert p["file"] == str(cache / "weights" / "mindcv" / "resnet18-1e65cd21.ckpt")
    assert started["spec"]["model"]["pretrained"] == "mindcv:resnet18"  # not made into a path
    # Not mindcv's file (random weights under its name): the run says so, names both hashes, goes on.
    assert p["name_hash"] == "1e65cd21" and p["name_hash_ok"] is False
    (w,) = [w for w in of_type(events(tmp_path / "run"), "warning") if w["code"] == "weights_name_hash_mismatch"]
    assert w["details"]["sha256"] == p["sha256"] and w["details"]["name_hash"] == "1e65cd21"
    assert np.isfinite(of_type(events(tmp_path / "run"), "step")[-1]["loss"])
    # mindcv's weights get mindcv's evaluation preprocessing, recorded for eval and predict to reuse.
    assert started["preprocess"]["name"] == "mindcv" and started["preprocess"]["why"] == "mindcv: weights"
    assert started["preprocess"]["source"] == "mindcv_cfg" and started["preprocess"]["mean"] == list(MEAN)
    manifest = json.loads((tmp_path / "run" / "checkpoints.json").read_text())
    assert manifest and all(e["preprocess"]["name"] == "mindcv" for e in manifest)
    assert manifest[-1]["weights"] == {
        "source": "mindcv:resnet18",
        "file": p["file"],
        "origin": "mindcv",
        "sha256": p["sha256"],
    }
    run = load_run(str(tmp_path / "run"))
    assert preprocess_of(run, str(tmp_path / "run" / manifest[-1]["file"])).name == "mindcv"


def test_fetch_weights_answers_the_cache_path_for_the_editors_copy(tmp_path, host, mindcv_ckpt, monkeypatch):
    monkeypatch.setenv("ASCEND_FINETUNE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("ASCEND_FINETUNE_WEIGHTS_URL", host.base)
    code, doc = runner("fetch-weights", "mindcv:resnet18")
    assert code == 0, doc
    assert doc["path"] == str(tmp_path / "cache" / "weights" / "mindcv" / "resnet18-1e65cd21.ckpt")
    assert doc["sha256"] == hashlib.sha256(mindcv_ckpt).hexdigest() and doc["cached"] is False
    assert doc["name_hash"] == "1e65cd21" and doc["name_hash_ok"] is False  # the editor warns on this
    code, doc = runner("fetch-weights", "mindcv:resnet18")
    assert code == 0 and doc["cached"] is True and len(host.requests) == 1
    code, doc = runner("fetch-weights", "mindcv:resnet152")
    assert code == 2 and doc["error"]["kind"] == "bad_input" and "does not offer" in doc["error"]["message"]
    monkeypatch.setenv("ASCEND_FINETUNE_WEIGHTS_URL", "http://127.0.0.1:9")  # discard port: refused
    code, doc = runner("fetch-weights", "mindcv:resnet50")
    assert code == 1 and doc["error"]["kind"] == "download_failed" and "model.pretrained" in doc["error"]["message"]


def test_fetch_weights_of_a_hub_source_brings_its_config_json_for_the_air_gapped_copy(tmp_path, host, monkeypatch):
    """The editor copies what fetch-weights leaves in this machine's cache; a hub weight's preprocessing is its
    config.json, so it is fetched beside the weights (or its absence said) and not left for the target to fetch."""
    weights = HF_CONFIG.replace("config.json", "model.safetensors")
    host.files[weights] = b"weights bytes"
    host.files[HF_CONFIG] = json.dumps({"pretrained_cfg": VIT_CFG}).encode()
    monkeypatch.setenv("ASCEND_FINETUNE_CACHE", str(tmp_path / "c"))
    monkeypatch.setenv("HF_ENDPOINT", host.base)
    code, doc = runner("fetch-weights", VIT)
    assert code == 0, doc
    folder = tmp_path / "c" / "weights" / "hf-hub" / "timm" / HF_CONFIG.split("/")[2] / "main"
    assert doc["path"] == str(folder / "model.safetensors")
    assert doc["config"] == {"url": host.base + HF_CONFIG, "path": str(folder / "config.json"), "problem": None}
    assert (folder / "config.json").read_bytes() == host.files[HF_CONFIG]
    # Cached: asked once; a repository without a config says so and fetches the weights all the same.
    assert runner("fetch-weights", VIT)[1]["config"]["path"] == str(folder / "config.json")
    assert sorted(r[0] for r in host.requests) == sorted([weights, HF_CONFIG])
    other = "hf-hub:timm/resnet18.a1_in1k"
    host.files[HF_PATH] = b"other weights"
    code, doc = runner("fetch-weights", other)
    assert code == 0 and doc["config"]["path"] is None and "HTTP 404" in doc["config"]["problem"]
    # mindcv names carry no config file.
    monkeypatch.setenv("ASCEND_FINETUNE_WEIGHTS_URL", host.base)
    assert "config" not in runner("fetch-weights", "mindcv:resnet18")[1]


def test_an_unknown_mindcv_name_lists_only_the_names_that_load():
    # mindcv:resnet152 is in the catalog but refused (mindcv_not_backbone): it was offered as known.
    assert MINDCV["resnet152"].backbone is None
    with pytest.raises(SourceError) as e:
        parse("mindcv:resnet81")
    assert "mindcv:resnet152" not in e.value.fix and "mindcv:resnet152" not in e.value.params["known"]
    assert "mindcv:resnet18" in e.value.params["known"]


@pytest.mark.parametrize("name", sorted(n for n, e in MINDCV.items() if e.backbone))
def test_the_offline_fix_for_a_copy_elsewhere_keeps_the_sources_preprocessing(name):
    # The message says: copy the file anywhere, set model.pretrained to it and model.preprocess to this.
    # That must evaluate as the named source does (a plain mindcv file would get imagenet's resize).
    from ascend_finetune.models.download import _offline_error
    from ascend_finetune.models.preprocess import choose

    err = _offline_error(parse(f"mindcv:{name}"), "http://m/x", "/cache/x", "URLError: refused")
    said = json.loads(err.params["preprocess"])
    assert f"model.preprocess to {err.params['preprocess']}" in str(err)
    named, _ = choose("auto", f"mindcv:{name}", "mindcv")
    copied, _ = choose(said, "/elsewhere/x.ckpt", "mindcv")
    keep = ("interpolation", "crop_pct", "rounding", "mean", "std", "crop_mode")
    assert [getattr(copied, k) for k in keep] == [getattr(named, k) for k in keep]
    # The size they were trained at, which the named source's run suggests for data.image_size (240 for
    # CrossViT), is said too: model.preprocess cannot carry it.
    assert err.params["image_size"] == named.input_size
    assert (f"data.image_size to {named.input_size}," in str(err)) == (named.input_size is not None)


def test_the_offline_fix_for_a_hub_file_names_its_config():
    from ascend_finetune.models.download import _offline_error

    err = _offline_error(parse("hf-hub:timm/resnet18.a1_in1k"), "http://h/x", "/cache/x", "URLError: refused")
    assert "config.json beside it" in str(err) and err.params["preprocess"] is None
