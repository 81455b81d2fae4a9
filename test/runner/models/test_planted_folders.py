"""A folder planted where the runner writes a file (another user's, in a shared run directory or weights
cache): `export` and the weights cache either put the file at its own name or refuse with a coded
error (`unsafe_file`, `cache_unsafe`), never write into the folder, and leave no temporary file behind.
A symlink at the name is replaced itself, never followed."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import runner, spec, write_spec
from weights_server import serve

from ascend_finetune.checkpoints.errors import PretrainedError
from ascend_finetune.data.demo import make_shapes
from ascend_finetune.models.catalog import MINDCV, parse
from ascend_finetune.models.download import cache_path, fetch

# -- export ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> Path:
    """resnet18 at 32 px, frozen backbone, one epoch on 8 images a class: one checkpoint to export."""
    d = tmp_path_factory.mktemp("planted_run")
    make_shapes(str(d / "data"), per_class=8, size=32, seed=4)
    s = spec(d / "data", name="pf", model={"freeze": "backbone"}, data={"val_split": 0.25}, train={"epochs": 1})
    code, out = runner("train", str(write_spec(d / "s.json", s)), "--run-dir", str(d / "run"))
    assert code == 0, out
    return d / "run"


def run_copy(run: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(run, its last checkpoint): a copy, so what a test plants in it stays there."""
    dst = tmp_path / "run"
    shutil.copytree(run, dst)
    entry = json.loads((dst / "checkpoints.json").read_text())[-1]
    return dst, dst / entry["file"]


def plant(at: Path, kind: str, elsewhere: Path) -> None:
    elsewhere.mkdir()
    if kind == "folder":
        at.mkdir()
    else:
        at.symlink_to(elsewhere)


def check_export(code: int, doc: object, out: Path, kind: str, elsewhere: Path) -> None:
    """A folder at `out` is refused (exit 2, unsafe_file) with nothing moved into it; a symlink to a folder
    is replaced by the model itself, nothing written where it led."""
    assert isinstance(doc, dict), doc
    if kind == "folder":
        assert code == 2 and doc["error"]["code"] == "unsafe_file", doc
        assert doc["error"]["params"]["path"] == str(out)
        assert out.is_dir() and list(out.iterdir()) == [], "nothing moved into the planted folder"
    else:
        assert code == 0, doc
        assert doc["file"] == str(out) and out.is_file() and not out.is_symlink()
        assert doc["bytes"] == out.stat().st_size > 1_000_000
    assert list(elsewhere.iterdir()) == [], "nothing written where the link led"


@pytest.mark.parametrize("kind", ["folder", "symlink_to_folder"])
def test_export_to_its_default_name_with_a_folder_planted_there(small_run, tmp_path, kind):
    run, ckpt = run_copy(small_run, tmp_path)
    out = ckpt.with_suffix(".mindir")
    plant(out, kind, tmp_path / "elsewhere")
    code, doc = runner("export", "--run", str(run), "--ckpt", str(ckpt), "--format", "mindir")
    check_export(code, doc, out, kind, tmp_path / "elsewhere")
    beside = {ckpt.name, out.name} | ({ckpt.with_suffix(".preprocess.json").name} if kind != "folder" else set())
    assert {p.name for p in ckpt.parent.iterdir()} == beside, "no temporary file or folder left"


def test_export_with_a_folder_planted_at_its_preprocess_file_writes_nothing(small_run, tmp_path):
    # It exported and placed the model, then failed on the sidecar: a model without the preprocessing
    # its deployment needs, and an error that said the export failed.
    run, ckpt = run_copy(small_run, tmp_path)
    sidecar = ckpt.with_suffix(".preprocess.json")
    sidecar.mkdir()
    code, doc = runner("export", "--run", str(run), "--ckpt", str(ckpt), "--format", "mindir")
    assert code == 2 and doc["error"]["code"] == "unsafe_file", doc
    assert doc["error"]["params"]["path"] == str(sidecar)
    assert {p.name for p in ckpt.parent.iterdir()} == {ckpt.name, sidecar.name}, "no model placed"
    assert sidecar.is_dir() and list(sidecar.iterdir()) == []


def _other_file_system(than: Path) -> str | None:
    """A writable folder, with a name MindSpore accepts, on another file system than `than`."""
    dev = os.stat(than).st_dev
    for cand in ("/dev/shm", f"/run/user/{os.getuid()}", "/tmp", "/var/tmp"):
        if os.path.isdir(cand) and os.access(cand, os.W_OK) and os.stat(cand).st_dev != dev:
            return cand
    return None


@pytest.mark.parametrize("kind", ["folder", "symlink_to_folder"])
def test_export_copied_from_another_file_system_with_a_folder_planted_there(small_run, tmp_path, kind, monkeypatch):
    # An output folder whose name MindSpore refuses makes the export go through the system's temp folder:
    # on another file system the file is copied, and the copy must land as a rename does.
    run, ckpt = run_copy(small_run, tmp_path)
    out = tmp_path / "it's mine" / "model.mindir"
    out.parent.mkdir()
    other = _other_file_system(tmp_path)
    if other is None:
        pytest.skip("no writable folder on another file system than the test's")
    tmp = tempfile.mkdtemp(prefix="planted-", dir=other)
    try:
        monkeypatch.setenv("TMPDIR", tmp)
        plant(out, kind, tmp_path / "elsewhere")
        code, doc = runner("export", "--run", str(run), "--ckpt", str(ckpt), "--format", "mindir", "--out", str(out))
        check_export(code, doc, out, kind, tmp_path / "elsewhere")
        beside = {out.name} | ({"model.preprocess.json"} if kind != "folder" else set())
        assert {p.name for p in out.parent.iterdir()} == beside, "no temporary file left next to the output"
        assert os.listdir(tmp) == [], "no temporary folder left in TMPDIR"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- the weights cache ----------------------------------------------------------------------------

MINDCV_PATH = "/" + MINDCV["resnet18"].path
BODY = bytes(range(256)) * 4096  # 1 MiB: fetch only moves bytes, it does not load them


@pytest.fixture
def host():
    state, server = serve()
    state.files[MINDCV_PATH] = BODY
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def cache(tmp_path, host, monkeypatch) -> Path:
    """The weights cache's folder for mindcv files, with the runner's CLI pointed at it and at `host`."""
    monkeypatch.setenv("ASCEND_FINETUNE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("ASCEND_FINETUNE_WEIGHTS_URL", host.base)
    folder = Path(cache_path(parse("mindcv:resnet18"))).parent
    folder.mkdir(parents=True)
    return folder


DEST = os.path.basename(MINDCV_PATH)


@pytest.mark.parametrize("suffix", ["", ".part.json"], ids=["weights_file", "part_record"])
def test_a_folder_at_a_name_the_cache_writes_is_cache_unsafe_on_every_run_until_removed(cache, host, suffix):
    planted = cache / (DEST + suffix)
    planted.mkdir()
    for _ in range(2):  # the next run is refused the same way, not a traceback after a download
        code, doc = runner("fetch-weights", "mindcv:resnet18")
        assert code == 1 and isinstance(doc, dict), doc
        assert doc["error"]["code"] == "cache_unsafe" and doc["error"]["params"]["path"] == str(planted), doc
        assert planted.is_dir() and list(planted.iterdir()) == [], "the planted folder is left as it was"
    if not suffix:
        assert host.requests == [], "refused before downloading a file that could not be put in place"
    planted.rmdir()
    code, doc = runner("fetch-weights", "mindcv:resnet18")
    assert code == 0 and doc["path"] == str(cache / DEST) and (cache / DEST).read_bytes() == BODY


def test_a_folder_planted_at_the_weights_name_during_the_download_keeps_the_whole_download(cache, host):
    dest = cache / DEST

    def plant_at_the_end(done: int, total: int | None) -> None:
        if done == total:
            dest.mkdir()

    env = dict(os.environ)
    with pytest.raises(PretrainedError) as e:
        fetch("mindcv:resnet18", env=env, progress=plant_at_the_end)
    assert e.value.why == "cache_unsafe" and e.value.params["path"] == str(dest)
    assert list(dest.iterdir()) == [], "nothing moved into the planted folder"
    dest.rmdir()
    got = fetch("mindcv:resnet18", env=env, progress=lambda d, t: None)
    assert got.downloaded and dest.read_bytes() == BODY
    # The checked download was kept: once the folder is gone it is put in place, not sent again (416).
    assert host.requests == [(MINDCV_PATH, None), (MINDCV_PATH, f"bytes={len(BODY)}-")]
    assert sorted(p.name for p in cache.iterdir()) == [DEST, DEST + ".lock", DEST + ".sha256.json"]


def test_a_folder_at_the_record_name_does_not_fail_a_whole_download(cache, host):
    record = cache / (DEST + ".sha256.json")
    record.mkdir()
    code, doc = runner("fetch-weights", "mindcv:resnet18")
    assert code == 0 and isinstance(doc, dict), doc
    assert doc["path"] == str(cache / DEST) and doc["cached"] is False and (cache / DEST).read_bytes() == BODY
    assert record.is_dir() and list(record.iterdir()) == [], "the planted folder is left as it was"
    assert sorted(p.name for p in cache.iterdir()) == [DEST, DEST + ".lock", record.name], "no temporary file left"
    code, doc = runner("fetch-weights", "mindcv:resnet18")
    assert code == 0 and doc["cached"] is True and len(host.requests) == 1
