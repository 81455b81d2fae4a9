"""`export`: a checkpoint as a MindIR or ONNX file, with the run's input size (1, 3, H, W). The
preprocessing (resize, crop, mean/std) its input needs, as the checkpoint recorded it, and the class
names its outputs stand for go into `<name>.preprocess.json` beside it, and into the result.

The network is exported in float32 (no AMP casts), in inference mode, compiled on the CPU so an
export never competes with a training run for the NPU. MindSpore writes into a private temporary
folder next to the output (its ONNX writer chmods the folder it writes to), then the file is renamed
into place: an interrupted export leaves no half file under the final name.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import tempfile
from typing import Any

import numpy as np

from ..rundir import UnsafeFile, atomic_write_json, create_temp, replace_file
from .errors import ToolError
from .format import read_index
from .tools import load_run

SUFFIX = {"mindir": ".mindir", "onnx": ".onnx"}
PREPROCESS_SUFFIX = ".preprocess.json"  # beside the model: its input's preprocessing and its class names
# MindSpore's own check on export file names (mindspore/train/serialization.py).
_MS_SAFE_PATH = re.compile(r"^[0-9a-zA-Z@_\-.:/\\]+$")


def export(run_dir: str, ckpt: str, fmt: str, out: str | None) -> dict[str, Any]:
    import mindspore as ms

    from .loading import load_net

    run = load_run(run_dir)
    read_index(ckpt)  # a damaged file fails here, before MindSpore starts
    suffix = SUFFIX[fmt]
    out = os.path.abspath(out) if out else os.path.splitext(os.path.abspath(ckpt))[0] + suffix
    if not out.endswith(suffix):
        raise ToolError(
            "bad_input",
            f"--out must end with {suffix} for --format {fmt} (got {out})",
            field="out",
            why="bad_export_suffix",
            params={"suffix": suffix, "format": fmt, "out": out},
        )
    sidecar = os.path.splitext(out)[0] + PREPROCESS_SUFFIX
    for dest in (out, sidecar):  # before the export: a folder at the sidecar's name left the model alone
        _no_folder_at(dest)
    size = int((run.spec.get("data") or {}).get("image_size") or 224)
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU")
    net = load_net(run, ckpt)
    shape = [1, 3, size, size]
    os.makedirs(os.path.dirname(out), exist_ok=True)
    # MindSpore refuses file names outside [0-9a-zA-Z@_-.:/\\] (a run under "My runs/" or "it's/"),
    # so it writes into a temporary folder with a plain name, next to the output when that is plain
    # (a rename), else in the system's temp folder (a copy), and the file is moved into place.
    out_dir = os.path.dirname(out)
    tmpdir = tempfile.mkdtemp(prefix=".export-", dir=out_dir if _MS_SAFE_PATH.match(out_dir) else None)
    if not _MS_SAFE_PATH.match(tmpdir):
        shutil.rmtree(tmpdir, ignore_errors=True)
        raise ToolError(
            "export_failed",
            f"no temporary folder with a name MindSpore accepts (tried {tmpdir}): set TMPDIR to a plain path",
            code=1,
            format=fmt,
            why="export_tmpdir",
            params={"tmpdir": tmpdir},
        )
    try:
        tmp = os.path.join(tmpdir, "model" + suffix)
        try:
            ms.export(net, ms.Tensor(np.zeros(shape, np.float32)), file_name=tmp, file_format=fmt.upper())
        except Exception as e:  # MindSpore raises RuntimeError/TypeError for ops a format cannot express
            first = str(e).strip().splitlines()[0][:400] if str(e).strip() else type(e).__name__
            raise ToolError(
                "export_failed",
                f"MindSpore could not export {os.path.basename(ckpt)} to {fmt.upper()}: {type(e).__name__}: {first}",
                code=1,
                format=fmt,
                why="export_failed",
                params={"file": os.path.basename(ckpt), "format": fmt, "error": f"{type(e).__name__}: {first}"},
            ) from e
        if not os.path.isfile(tmp):
            raise ToolError(
                "export_failed",
                f"MindSpore wrote no {fmt.upper()} file for {os.path.basename(ckpt)}",
                code=1,
                format=fmt,
                why="export_no_file",
                params={"file": os.path.basename(ckpt), "format": fmt},
            )
        _place(tmp, out)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    # The exported network takes normalised input and answers class indices: what a deployment needs to
    # feed it and read it goes beside it, since the run folder does not travel with the model.
    facts = {
        "model": os.path.basename(out),
        "input_shape": shape,
        "dtype": "float32",
        "preprocess": _preprocess(run, ckpt),
        "classes": run.classes,
    }
    atomic_write_json(sidecar, facts)
    return {
        "file": out,
        "format": fmt,
        "bytes": os.path.getsize(out),
        "ckpt": os.path.abspath(ckpt),
        "preprocess_file": sidecar,
        **{k: v for k, v in facts.items() if k != "model"},
    }


def _no_folder_at(path: str) -> None:
    """UnsafeFile for a folder (not a symlink: that is replaced) at an output's name, as replace_file
    would raise once the export is done: checked first, so nothing is written when one is there."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        name = os.path.basename(path)
        raise UnsafeFile(f"{name} is not a regular file", path, file=name)


def _place(tmp: str, out: str) -> None:
    """`tmp` renamed to `out` itself: a symlink there is replaced, not followed, and a folder there is
    UnsafeFile (shutil.move would put the file inside it and report the folder). From another file
    system (the system's temp folder) it is copied to an exclusive temporary file next to `out` first,
    so the rename still swaps whole files."""
    try:
        replace_file(tmp, out)
        return
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
    fd, near = create_temp(out)
    try:
        with os.fdopen(fd, "wb") as dst, open(tmp, "rb") as src:
            shutil.copyfileobj(src, dst, 1 << 20)
            os.fchmod(dst.fileno(), stat.S_IMODE(os.fstat(src.fileno()).st_mode))  # as the rename would keep it
            dst.flush()
            os.fsync(dst.fileno())
        replace_file(near, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(near)
        raise


def _preprocess(run: Any, ckpt: str) -> dict[str, object]:
    from ..models.preprocess import TABLE
    from .loading import preprocess_of

    return (preprocess_of(run, ckpt) or TABLE["imagenet"]).describe()
