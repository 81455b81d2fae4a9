"""The runner's error objects, each from its real raising code called with bad input, for
test_codes.py to record under `error:<code>` in fixtures/runner_codes.json. The errors that need a
device, a whole run or a network are entered there by hand ("recorded": false), their parameters
read off the call sites."""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from collections.abc import Callable
from typing import Any

from ascend_finetune import attach, cli, clierrors
from ascend_finetune.checkpoints import format as ckpt_format
from ascend_finetune.checkpoints import predict, tools
from ascend_finetune.checkpoints.errors import PretrainedError, ToolError, exception_error
from ascend_finetune.data.folder import DataError, scan
from ascend_finetune.meta import MetaError, check_name, check_notes, check_tag
from ascend_finetune.models import cache_folder, catalog, download, torch_weights
from ascend_finetune.models.catalog import SourceError
from ascend_finetune.rundir import UnsafeFile, read_bytes
from ascend_finetune.spec import Problem, SpecError
from ascend_finetune.sweep.commands import BadInput, prepare
from ascend_finetune.train.weights_setup import StartingWeights, check_unchanged


def _cli_line(e: BaseException) -> dict[str, Any]:
    """The error object the CLI prints for `e` (clierrors.report)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert clierrors.report(e) is not None
    return json.loads(buf.getvalue())["error"]


def _caught(fn: Callable[[], Any]) -> dict[str, Any]:
    """The error object `fn`'s exception becomes: as a run records it, or as the CLI prints it."""
    try:
        fn()
    except DataError as e:
        return {"code": e.why, "message": e.message, "fix": e.fix, "params": e.params}
    except PretrainedError as e:
        return {"code": e.why, "message": str(e), "params": e.params}
    except SourceError as e:  # the CLI's fetch-weights and weights-status: message and fix in one line
        return _cli_line(clierrors.CliError.of(2, "bad_input", e, f"{e}; {e.fix}"))
    except MetaError as e:  # as `meta` refuses it
        return _cli_line(clierrors.CliError.of(2, "bad_input", e, field=e.field))
    except BadInput as e:  # as the sweep commands refuse it
        return _cli_line(clierrors.CliError.of(2, e.kind, e))
    except (ToolError, UnsafeFile, SpecError) as e:
        return _cli_line(e)
    raise AssertionError(f"{fn} raised nothing")


def _folders(root: str, tree: dict[str, list[str]]) -> str:
    for cls, files in tree.items():
        os.makedirs(os.path.join(root, cls), exist_ok=True)
        for f in files:
            with open(os.path.join(root, cls, f), "wb") as fh:
                fh.write(b"not an image")
    return root


def errors() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        out.append(_caught(lambda: scan(os.path.join(tmp, "missing"), 1)))
        one = _folders(os.path.join(tmp, "one"), {"cats": ["a.jpg"]})
        out.append(_caught(lambda: scan(one, 1)))
        out.append(_caught(lambda: scan(one, 1, "data.val", classes=["cats", "dogs"])))
        two = _folders(os.path.join(tmp, "two"), {"cats": ["a.jpg"], "dogs": ["b.jpg"]})
        out.append(_caught(lambda: scan(two, 1)))
        for value in ("mindcv:resnet18#md5=1", "mindcv:nope", "mindcv:resnet", "hf-hub:x", "hf-hub:timm/r.a:../x"):
            out.append(_caught(lambda v=value: catalog.parse(v)))
        out.append(_caught(lambda: catalog.parse("hf-hub:timm/nonet.a1")))
        out.append(_caught(lambda: catalog.parse("zoo:thing")))
        out.append(_caught(lambda: torch_weights.read_state_dict(os.path.join(tmp, "none.pth"))))
        txt = os.path.join(tmp, "w.txt")
        bad = os.path.join(tmp, "w.safetensors")
        for p in (txt, bad):
            with open(p, "wb") as fh:
                fh.write(b"\x00" * 16)
        out.append(_caught(lambda: torch_weights.read_state_dict(txt)))
        out.append(_caught(lambda: torch_weights.read_state_dict(bad)))
        out.append(_caught(lambda: torch_weights._to_numpy("x", "fc.weight")))
        out.append(_caught(lambda: torch_weights._unwrap([3], txt)))
        out.append(_caught(lambda: torch_weights.convert("swin", {})))
        src = catalog.parse("mindcv:resnet18")
        offline = download._offline_error(src, "http://127.0.0.1:1/r18.ckpt", "/cache/r18.ckpt", "URLError: refused")
        out.append(_caught(lambda: (_ for _ in ()).throw(offline)))
        hub = download._offline_error(  # the hub's variant: no `preprocess` (it is the repository's config.json)
            catalog.parse("hf-hub:timm/resnet18.a1_in1k"), "http://127.0.0.1:1/m", "/cache/m", "URLError: refused"
        )
        out.append(_caught(lambda: (_ for _ in ()).throw(hub)))
        sized = download._offline_error(  # a mindcv model trained at 240 px: `image_size` too
            catalog.parse("mindcv:crossvit_9"), "http://127.0.0.1:1/c9.ckpt", "/cache/c9.ckpt", "URLError: refused"
        )
        out.append(_caught(lambda: (_ for _ in ()).throw(sized)))
        cut = download._interrupted_error(src, "http://127.0.0.1:1/r18.ckpt", "/cache/r18.ckpt.part", "timed out")
        out.append(_caught(lambda: (_ for _ in ()).throw(cut)))
        out.append(_caught(lambda: _fetch_through_symlinked_folder(tmp)))
        lock = "/cache/r18.ckpt.lock"
        out.append(_caught(lambda: (_ for _ in ()).throw(download._locked_error(src, lock))))
        bad_range = download._bad_range_error(src, "http://127.0.0.1:1/r18.ckpt", "/cache/r18.ckpt.part", "bytes x")
        out.append(_caught(lambda: (_ for _ in ()).throw(bad_range)))
        link = os.path.join(tmp, "status.json")
        os.symlink(txt, link)
        out.append(_caught(lambda: read_bytes(link, 100)))
        out.append(_caught(lambda: read_bytes(txt, 4)))
        unpinned = StartingWeights("default", txt, None, None, (0, 0, 0, 0))  # not the file checked before
        out.append(_caught(lambda: check_unchanged(unpinned)))
        spec_error = SpecError([Problem("train.lr", "must be > 0", "set train.lr to 0.01")])
        out.append(_caught(lambda: (_ for _ in ()).throw(spec_error)))
        out.append(_attach_error(tmp))
        out += _tool_errors(tmp, txt)
        out += _command_errors(tmp)
    out += _training_checks()
    out.append(exception_error(ValueError("operands could not be broadcast together")))
    return out


def _fetch_through_symlinked_folder(tmp: str) -> None:
    """fetch() with the cache's weights/mindcv folder a symlink (no request is made: it refuses first)."""
    cache, elsewhere = os.path.join(tmp, "cache"), os.path.join(tmp, "elsewhere")
    os.makedirs(os.path.join(cache, "weights"))
    os.makedirs(elsewhere)
    link = os.path.join(cache, "weights", "mindcv")
    os.symlink(elsewhere, link)
    if os.geteuid() != 0:  # only root can give a link to another owner: the error as fetch raises it
        raise cache_folder.CacheUnsafe(link, "symlink")
    os.lchown(link, 12345, 12345)  # another user's link: not followed
    env = {"ASCEND_FINETUNE_CACHE": cache, "ASCEND_FINETUNE_WEIGHTS_URL": "http://127.0.0.1:1"}
    download.fetch("mindcv:resnet18", env=env, progress=lambda *_: None)


def _attach_error(tmp: str) -> dict[str, Any]:
    """`attach` on a run directory whose status.json is a symlink: its bad_run line."""
    run = os.path.join(tmp, "run")
    os.makedirs(run)
    os.symlink("/etc/hostname", os.path.join(run, "status.json"))
    raw = io.BytesIO()
    text = io.TextIOWrapper(raw)  # attach writes bytes to sys.stdout.buffer
    with contextlib.redirect_stdout(text):
        assert attach.attach(run, 0, follow=False) == 1
        line = raw.getvalue()
    text.detach()
    return json.loads(line)["error"]


def _training_checks() -> list[dict[str, Any]]:
    """The spec checks a run makes once it knows its data."""
    import numpy as np

    from ascend_finetune.data.plan import _check_classes
    from ascend_finetune.train import unfreeze
    from ascend_finetune.train.accumulate import updates_per_epoch
    from ascend_finetune.train.loss import class_weights

    model = {"backbone": "resnet18", "freeze": "none", "unfreeze": [{"epoch": 3, "freeze": "backbone"}]}
    return [
        _caught(lambda: class_weights([1.0, 2.0], np.array([5, 5, 5]))),
        _caught(lambda: updates_per_epoch(3, 4)),
        _caught(lambda: _check_classes({"data": {"train": "/d/train"}}, ["a", "b", "c"], 5)),  # type: ignore[typeddict-item]
        _caught(lambda: unfreeze.check({"model": model, "train": {"cache_features": True}})),  # type: ignore[typeddict-item]
        _caught(lambda: unfreeze.check({"model": model, "train": {}})),  # type: ignore[typeddict-item]
    ]


def _cli(argv: list[str]) -> dict[str, Any]:
    """The error line `python -m ascend_finetune ARGV` prints."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cli.main(argv) != 0
    return json.loads(buf.getvalue().strip().splitlines()[-1])["error"]


def _check(path: str) -> dict[str, Any]:
    """predict's answer for one file it cannot classify."""
    error = predict.check_file(path)
    assert error is not None, path
    return error


def _tool_errors(tmp: str, junk: str) -> list[dict[str, Any]]:
    """The checkpoint tools' refusals that need no MindSpore."""
    empty = os.path.join(tmp, "empty.ckpt")
    open(empty, "wb").close()
    fifo = os.path.join(tmp, "fifo.jpg")
    os.mkfifo(fifo)
    big = os.path.join(tmp, "big.jpg")
    with open(big, "wb") as fh:
        fh.truncate(predict.MAX_FILE_BYTES + 1)
    return [
        _caught(lambda: tools.load_run(os.path.join(tmp, "norun"))),
        _caught(lambda: ckpt_format.read_index(os.path.join(tmp, "none.ckpt"))),
        _caught(lambda: ckpt_format.read_index(empty)),
        _caught(lambda: predict.run_of(empty, None)),
        _caught(lambda: tools._need_manifest(tmp)),
        _check(os.path.join(tmp, "none.jpg")),
        _check(fifo),
        _check(big),
        _check(junk),
    ]


def _command_errors(tmp: str) -> list[dict[str, Any]]:
    """The CLI's own refusals, and the meta and sweep checks behind its commands."""
    missing = os.path.join(tmp, "nowhere")
    run = os.path.join(tmp, "done")
    os.makedirs(run)
    with open(os.path.join(run, "status.json"), "w") as fh:
        json.dump({"state": "completed", "pid": 1}, fh)
    spec = os.path.join(tmp, "sweep.json")
    with open(spec, "w") as fh:
        fh.write("{}")
    return [
        _cli(["control", missing, "stop"]),
        _cli(["control", run, "stop"]),
        _cli(["thumbs", tmp, "a.jpg", "--max-bytes", "0"]),
        _cli(["thumbs", tmp, *[f"{i}.jpg" for i in range(1000)]]),
        _cli(["thumbs", missing, "a.jpg"]),
        _cli(["preview", tmp, "--samples", "-1"]),
        _caught(lambda: check_name("n" * 500)),
        _caught(lambda: check_name("a\u200bb")),
        _caught(lambda: check_notes("x" * 100_000)),
        _caught(lambda: check_notes("a\x07")),
        _caught(lambda: check_tag(" ")),
        _caught(lambda: check_tag("t" * 100)),
        _caught(lambda: check_tag("a\u200b")),
        _caught(lambda: prepare(run, None, None)),
        _caught(lambda: prepare(spec, None, None)),
        _caught(lambda: prepare(spec, tmp, "bad id")),
    ]
