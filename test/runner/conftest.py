"""Shared fixtures: tiny image sets the tests make, a helper to call the runner's CLI, and one
trained "task A" run that the transfer, pretrained and inspect tests build on."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "runner"))
# The runner caches image-scan verdicts per data root; keep the tests' throwaway roots out of ~/.cache.
# The folder goes at the end of the session (pytest_unconfigure), when this process made it.
_OWN_CACHE = None if "ASCEND_FINETUNE_CACHE" in os.environ else tempfile.mkdtemp(prefix="aft-test-cache-")
if _OWN_CACHE:
    os.environ["ASCEND_FINETUNE_CACHE"] = _OWN_CACHE

from ascend_finetune.data.demo import CLASSES, SHAPES_A, SHAPES_B, TASK_B, make_shapes  # noqa: E402
from ascend_finetune.events import read_events  # noqa: E402


def runner(*args: str, timeout: float = 300, check_json: bool = True) -> tuple[int, object]:
    """Run `python -m ascend_finetune ARGS`; returns (exit code, last JSON document on stdout)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"))
    r = subprocess.run(
        [sys.executable, "-m", "ascend_finetune", *args], capture_output=True, text=True, timeout=timeout, env=env
    )
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    doc = json.loads(lines[-1]) if (lines and check_json) else r.stdout
    return r.returncode, doc


def snippet(code: str, *args: str, cwd, timeout: float = 300) -> dict:
    """Run `python -c CODE ARGS` with the runner importable and oneDNN at AVX2 (as the runner sets it for
    itself), from `cwd`; returns the last stdout line as JSON. For tests that drive the runner's parts
    in a process of their own (MindSpore's context is set once per process)."""
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2", PYTHONPATH=str(ROOT / "runner"))
    r = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=timeout, cwd=str(cwd)
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def spec(train_dir, **over) -> dict:
    """A small, fast spec: resnet18 at 32 px on CPU, O2 with dynamic scaling from 1024."""
    s = {
        "name": "t",
        "data": {"train": str(train_dir), "image_size": 32, "batch_size": 16, "workers": 2, "val_split": 0.1},
        "model": {"backbone": "resnet18", "pretrained": None, "freeze": "none"},
        "train": {"epochs": 2, "lr": 0.01},
        "amp": {"level": "O2", "loss_scale": "dynamic", "init_scale": 1024},
        "checkpoint": {"every_steps": 1000, "keep_max": 5},
        "device": {"target": "CPU"},
    }
    for key, value in over.items():
        if isinstance(value, dict):
            s.setdefault(key, {}).update(value)
        else:
            s[key] = value
    return s


def write_spec(path: Path, s: dict) -> Path:
    path.write_text(json.dumps(s, ensure_ascii=False))
    return path


def events(run_dir) -> list[dict]:
    return read_events(os.path.join(run_dir, "events.jsonl"))


def of_type(evs: list[dict], t: str) -> list[dict]:
    return [e for e in evs if e["type"] == t]


def wait_for(pred, timeout: float = 180, what: str = "condition"):
    """Poll until pred() is truthy (returns it); never a fixed sleep."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def assert_contiguous(evs: list[dict]) -> None:
    assert [e["seq"] for e in evs] == list(range(1, len(evs) + 1)), "seq must be contiguous from 1"


# A whole pass writes ~17 GB of runs and checkpoints. pytest removes a passed test's tmp_path (the
# retention policy scripts/test.sh sets), but a module fixture's tmp_path_factory folders would stay
# until the session ends: together several GB, which once filled a CI disk. So the folders that
# module-scoped fixtures make are removed when their module ends, unless one of its tests failed (as
# the retention policy keeps a failed test's); session fixtures' (the data sets, task A's run) stay.
class _ModuleFolders:
    """A plugin, not conftest hooks: pytest calls a conftest's fixture hooks only for fixtures of nodes
    under the conftest's folder, so a session fixture (of the Session, at the rootdir) set up inside a
    module fixture would pass unseen and its folder be taken for the module's."""

    def __init__(self) -> None:
        self.scopes: list[str] = []  # of the fixtures being set up, innermost last
        self.made: list[Path] = []  # by the running module's module fixtures
        self.ending: list[Path] = []  # of a module that passed, removed after its last teardown report

    def note(self, path: Path) -> None:
        if self.scopes and self.scopes[-1] == "module":
            self.made.append(path)

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        self.scopes.append(request.scope)
        try:
            return (yield)
        finally:
            self.scopes.pop()

    def pytest_runtest_logreport(self, report) -> None:
        # The module fixtures end in its last test's teardown, whose report comes after them: an error
        # there (in their own teardown too) keeps the folders.
        if report.when == "teardown" and self.ending:
            ending, self.ending = self.ending, []
            if not report.failed:
                for d in ending:
                    shutil.rmtree(d, ignore_errors=True)


_MODULE_FOLDERS = _ModuleFolders()
_mktemp = pytest.TempPathFactory.mktemp


def _mktemp_noting_module_dirs(self, basename: str, numbered: bool = True) -> Path:
    path = _mktemp(self, basename, numbered)
    _MODULE_FOLDERS.note(path)
    return path


pytest.TempPathFactory.mktemp = _mktemp_noting_module_dirs  # type: ignore[method-assign]


def pytest_configure(config):
    config.pluginmanager.register(_MODULE_FOLDERS, "ascend-module-folders")


@pytest.fixture(scope="module", autouse=True)
def free_module_dirs(request):
    """Set up before, so torn down after, the module's other module-scoped fixtures."""
    failed_before = request.session.testsfailed
    yield
    made, _MODULE_FOLDERS.made = _MODULE_FOLDERS.made, []
    if request.session.testsfailed == failed_before:
        _MODULE_FOLDERS.ending = made


def pytest_unconfigure(config):
    if _OWN_CACHE:
        shutil.rmtree(_OWN_CACHE, ignore_errors=True)


@pytest.fixture(autouse=True)
def no_leftover_runs(tmp_path):
    """A failed test must not leave a detached training hogging the two cores for the next ones."""
    yield
    for status in tmp_path.glob("**/status.json"):
        if status.is_symlink() or not status.is_file():  # a hostile run (test_hostile.py): a FIFO would hang
            continue
        try:
            st = json.loads(status.read_text())
            pid = st.get("pid") if isinstance(st, dict) and st.get("state") == "running" else None
            if isinstance(pid, int) and 0 < pid < 1 << 22 and os.getpgid(pid) != os.getpgid(0):
                os.killpg(pid, 9)
        except (OSError, ValueError, RecursionError):
            pass


@pytest.fixture(scope="session")
def data_a(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("data") / "shapes_a"
    make_shapes(str(out), per_class=40, size=32, seed=1)
    return out


@pytest.fixture(scope="session")
def data_b(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("data") / "shapes_b"
    make_shapes(str(out), per_class=32, size=32, seed=2, classes=TASK_B)
    return out


def _few_shot(tmp_path_factory, name: str, classes, size: int, seed: int) -> tuple[Path, Path]:
    """(train, val) of a few-shot task: 5 labelled images per class, 40 per class to validate on."""
    root = tmp_path_factory.mktemp("data") / name
    make_shapes(str(root / "train"), per_class=5, size=size, seed=seed, classes=classes)
    make_shapes(str(root / "val"), per_class=40, size=size, seed=seed + 1, classes=classes)
    return root / "train", root / "val"


@pytest.fixture(scope="session")
def data_b_few(tmp_path_factory) -> tuple[Path, Path]:
    """A few-shot task B: TASK_B (other colours), 32 px."""
    return _few_shot(tmp_path_factory, "shapes_b_few", TASK_B, size=32, seed=3)


@pytest.fixture(scope="session")
def shapes_a(tmp_path_factory) -> Path:
    """Task A' of the transfer test: six shapes in random colours (colour carries no label), 120 each, 64 px."""
    out = tmp_path_factory.mktemp("data") / "shapes_only_a"
    make_shapes(str(out), per_class=120, size=64, seed=5, classes=SHAPES_A)
    return out


@pytest.fixture(scope="session")
def shapes_b_few(tmp_path_factory) -> tuple[Path, Path]:
    """A few-shot task B': three shapes not in A', random colours, 64 px."""
    return _few_shot(tmp_path_factory, "shapes_only_b_few", SHAPES_B, size=64, seed=6)


@pytest.fixture(scope="session")
def run_a(tmp_path_factory, data_a) -> Path:
    """Task A trained from scratch for 4 epochs: the 'pretrained' backbone of the transfer tests."""
    d = tmp_path_factory.mktemp("run_a")
    spec_path = write_spec(d / "a.json", spec(data_a, name="task-a", train={"epochs": 4, "lr": 0.01}))
    code, out = runner("train", str(spec_path), "--run-dir", str(d / "run"))
    assert code == 0, out
    return d / "run"


__all__ = ["CLASSES", "TASK_B", "runner", "spec", "write_spec", "events", "of_type", "wait_for", "assert_contiguous"]
