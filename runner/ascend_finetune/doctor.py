"""`doctor`: what this machine can train with. Python, MindSpore and its backends, CANN, NPUs.

The NPU part reads `npu-smi info`; on machines without it (this project's CI) it reports none.
A fuller npu-smi parser for telemetry arrives with the NPU telemetry work.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from typing import Any

CANN_SET_ENV = ("/usr/local/Ascend/ascend-toolkit/set_env.sh", "/usr/local/Ascend/cann/set_env.sh")


def _mindspore() -> dict[str, Any]:
    try:
        import mindspore as ms
    except Exception as e:
        return {"ok": False, "error": f"{type(e).__name__}: {e}",
                "fix": "pip install mindspore==2.10.0 into the Python that the target uses"}
    backends = {"CPU": True}
    try:
        backends["Ascend"] = bool(ms.hal.is_available("Ascend"))
    except Exception:
        backends["Ascend"] = False
    return {"ok": True, "version": ms.__version__, "backends": backends}


def _cann() -> dict[str, Any]:
    home = os.environ.get("ASCEND_HOME_PATH") or os.environ.get("ASCEND_TOOLKIT_HOME")
    set_env = next((p for p in CANN_SET_ENV if os.path.isfile(p)), None)
    return {"found": bool(home or set_env), "home": home, "set_env": set_env,
            "env_loaded": bool(home)}


def _npus() -> dict[str, Any]:
    exe = shutil.which("npu-smi")
    if not exe:
        return {"npu_smi": None, "devices": []}
    try:
        r = subprocess.run([exe, "info"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"npu_smi": exe, "devices": [], "error": str(e)}
    return {"npu_smi": exe, "devices": [], "raw": r.stdout[-4000:]}


def doctor() -> dict[str, Any]:
    return {
        "python": {"version": platform.python_version(), "executable": sys.executable,
                   "ok": sys.version_info[:2] >= (3, 9)},
        "mindspore": _mindspore(),
        "cann": _cann(),
        "npu": _npus(),
        "host": platform.node(),
        "cpu_count": os.cpu_count(),
    }
