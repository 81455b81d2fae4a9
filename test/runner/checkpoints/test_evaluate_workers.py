"""The standalone `eval` reads data.workers as training does: 0 is "the cores available" (not 1),
a number is capped at those cores."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ascend_finetune.checkpoints import evaluate
from ascend_finetune.data import plan


class Scanned(Exception):
    pass


@pytest.mark.parametrize(("asked", "used"), [(0, 6), (None, 6), (2, 2), (64, 6)])
def test_eval_workers_follow_the_runs_data_workers(monkeypatch, tmp_path, asked, used):
    seen = []

    def samples(run, folder, workers):
        seen.append(workers)
        raise Scanned  # the scan's worker count is what this test is about: stop before MindSpore

    run = SimpleNamespace(classes=["a", "b"], spec={"data": {"workers": asked}}, run_dir=str(tmp_path))
    monkeypatch.setattr(evaluate, "load_run", lambda _d: run)
    monkeypatch.setattr(evaluate, "read_index", lambda _c: None)
    monkeypatch.setattr(evaluate, "_samples", samples)
    monkeypatch.setattr(plan, "available_cores", lambda: 6)  # this process's affinity and cgroup quota
    with pytest.raises(Scanned):
        evaluate.evaluate(str(tmp_path), str(tmp_path / "x.ckpt"), None, None, None)
    assert seen == [used]
