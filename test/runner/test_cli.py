"""The CLI's quick commands stay quick: `validate`, `ls`, `probe`, `weights-status` and `doctor` import
neither MindSpore nor numpy with the runner's modules, and `doctor` starts (and says what is missing)
without numpy."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT, spec, write_spec


def _python(code: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "runner")),
        cwd=cwd,
    )


def test_validate_ls_and_probe_load_neither_mindspore_nor_numpy(tmp_path, data_a):
    write_spec(tmp_path / "s.json", spec(data_a))
    r = _python(
        "import json, sys; from ascend_finetune.cli import main\n"
        "for argv in (['validate', 's.json'], ['ls', '.'], ['probe', '.'], ['weights-status']): main(argv)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('mindspore', 'numpy'))))",
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[-1]) == []


def test_doctor_starts_without_numpy(tmp_path):
    # numpy missing (None in sys.modules makes every import of it fail): doctor still answers, and
    # says that MindSpore cannot load.
    r = _python(
        "import sys; sys.modules['numpy'] = None\nfrom ascend_finetune.cli import main; main(['doctor'])", tmp_path
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout.splitlines()[-1])
    assert doc["python"]["ok"] and doc["mindspore"]["ok"] is False and "numpy" in doc["mindspore"]["error"]
