"""A run's hold on its directory: one writer at a time."""

from __future__ import annotations

import os

import pytest
from conftest import ROOT


def test_a_second_writer_on_a_run_directory_is_refused(tmp_path, data_a):
    from ascend_finetune.train.run import Run, RunBusy

    first = Run({"name": "x"}, str(tmp_path / "run"))
    with pytest.raises(RunBusy):
        Run({"name": "x"}, str(tmp_path / "run"))
    first._lock.close()
    Run({"name": "x"}, str(tmp_path / "run"))._lock.close()  # free again once the first is gone
    os.chdir(ROOT)
