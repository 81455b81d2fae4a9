"""`doctor`: what this machine can train with. Python, MindSpore and its backends, mindcv, CANN, NPUs.

The NPU part runs `npu-smi info` and parses it (npu_smi.py); on machines without it (this
project's CI) it reports none.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from typing import Any

from .backend import ascend_available
from .npu_smi import UnknownFormat, parse_info

RAW_LIMIT = 4000  # characters of npu-smi's output kept when it could not be read
CANN_SET_ENV = ("/usr/local/Ascend/ascend-toolkit/set_env.sh", "/usr/local/Ascend/cann/set_env.sh")


def _mindspore() -> dict[str, Any]:
    try:
        import mindspore as ms
    except Exception as e:
        return {
            "ok": False,
            "error": f"{type(e).__name__}: {e}",
            "fix": "pip install mindspore==2.10.0 into the Python that the target uses",
        }
    # The same question training asks (device_context, not the deprecated ms.hal), so doctor and a run agree.
    backends = {"CPU": True, "Ascend": ascend_available(ms)}
    return {"ok": True, "version": ms.__version__, "backends": backends}


MINDCV_PINS = {"mindcv": "0.3.0", "pyyaml": None, "tqdm": None}  # runner/requirements.txt's mindcv lines


def _mindcv() -> dict[str, Any]:
    """mindcv and its two small dependencies, read from the installed packages' metadata (importing
    mindcv would import all its models). Only mindcv backbones need them; ResNet runs do not."""
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str | None] = {}
    for name in MINDCV_PINS:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    bad = [n for n, want in MINDCV_PINS.items() if found[n] is None or (want and found[n] != want)]
    out: dict[str, Any] = {
        "ok": not bad,
        "version": found["mindcv"],
        "packages": found,
        "needed_for": "mindcv backbones",
    }
    if bad:
        out["fix"] = (
            "pip install mindcv==0.3.0 pyyaml tqdm into the Python that the target uses (ResNet runs work without them)"
        )
    return out


def _cann() -> dict[str, Any]:
    home = os.environ.get("ASCEND_HOME_PATH") or os.environ.get("ASCEND_TOOLKIT_HOME")
    set_env = next((p for p in CANN_SET_ENV if os.path.isfile(p)), None)
    return {"found": bool(home or set_env), "home": home, "set_env": set_env, "env_loaded": bool(home)}


def _npus() -> dict[str, Any]:
    """`npu-smi info`, parsed: one entry in `devices` per chip (see npu_smi.parse_info), the
    processes using them, the driver version. Any failure is reported in `error`, never raised;
    when the output could not be read, `raw` keeps (the start of) what npu-smi printed."""
    exe = shutil.which("npu-smi")
    if not exe:
        return {"npu_smi": None, "devices": [], "processes": []}
    try:
        r = subprocess.run([exe, "info"], capture_output=True, text=True, errors="replace", timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"npu_smi": exe, "devices": [], "processes": [], "error": f"npu-smi info: {e}"}
    if r.returncode != 0:
        tail = (r.stderr or r.stdout or "").strip()[-500:]
        return {
            "npu_smi": exe,
            "devices": [],
            "processes": [],
            "error": f"npu-smi info exited with {r.returncode}" + (f": {tail}" if tail else ""),
            "raw": (r.stdout or "")[:RAW_LIMIT],
        }
    try:
        parsed = parse_info(r.stdout)
    except UnknownFormat as e:
        return {
            "npu_smi": exe,
            "devices": [],
            "processes": [],
            "error": f"unrecognised npu-smi info output: {e}",
            "raw": r.stdout[:RAW_LIMIT],
        }
    except Exception as e:  # a parser bug must not take doctor down
        return {
            "npu_smi": exe,
            "devices": [],
            "processes": [],
            "error": f"npu-smi info could not be parsed: {type(e).__name__}: {e}",
            "raw": r.stdout[:RAW_LIMIT],
        }
    return {
        "npu_smi": exe,
        "devices": parsed["devices"],
        "processes": parsed["processes"],
        "version": parsed["version"],
    }


def doctor() -> dict[str, Any]:
    return {
        "python": {
            "version": platform.python_version(),
            "executable": sys.executable,
            "ok": sys.version_info[:2] >= (3, 9),
        },
        "mindspore": _mindspore(),
        "mindcv": _mindcv(),
        "cann": _cann(),
        "npu": _npus(),
        "host": platform.node(),
        "cpu_count": os.cpu_count(),
    }
