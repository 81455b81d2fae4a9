"""Reading checkpoint files without MindSpore: an index of tensors (name, shape, dtype, where the bytes
are) and one tensor at a time as a numpy array.

MindSpore's load_checkpoint reads the whole file into one protobuf message and hands the bytes to C++
with the shape the file claims; on a damaged file it raises unrelated errors or, when the bytes do
not match the claimed shape, can crash the process. So every tool here reads the index first,
checks every length against the file's size and every tensor's byte count against its shape, and
only then (eval, export) lets MindSpore load the file.

`.ckpt` is a sequence of protobuf `Checkpoint` messages (MindSpore's checkpoint.proto): each is
`value` (field 1) = {tag (1): name, tensor (2): {dims (1), tensor_type (2), tensor_content (3)}};
big tensors are split into several consecutive values with the same tag; a file saved with
`crc_check` ends with `b"crc_num"` and 10 bytes. `.safetensors` is an 8-byte little-endian header
length, a JSON header {name: {dtype, shape, data_offsets}}, then the data.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

import numpy as np

from .errors import ToolError


def bad_checkpoint(path: str, why: str) -> ToolError:
    return ToolError(
        "bad_checkpoint",
        f"{os.path.basename(path)} is not a usable checkpoint: {why}",
        file=os.path.abspath(path),
        why="bad_checkpoint",
        params={"file": os.path.basename(path), "reason": why},
    )


# MindSpore's tensor_type names -> (numpy dtype, bytes per element); BFloat16 is read as uint16.
CKPT_DTYPES = {
    "Int8": np.int8,
    "UInt8": np.uint8,
    "Int16": np.int16,
    "UInt16": np.uint16,
    "Int32": np.int32,
    "UInt32": np.uint32,
    "Int64": np.int64,
    "UInt64": np.uint64,
    "Float16": np.float16,
    "Float32": np.float32,
    "Float64": np.float64,
    "Bool": np.bool_,
    "BFloat16": np.uint16,
}
SAFETENSORS_DTYPES = {
    "I8": "Int8",
    "U8": "UInt8",
    "I16": "Int16",
    "U16": "UInt16",
    "I32": "Int32",
    "U32": "UInt32",
    "I64": "Int64",
    "U64": "UInt64",
    "F16": "Float16",
    "F32": "Float32",
    "F64": "Float64",
    "BOOL": "Bool",
    "BF16": "BFloat16",
}
CRC_TRAILER = 17  # b"crc_num" + 10 bytes


@dataclass
class TensorEntry:
    name: str
    shape: list[int]
    dtype: str  # MindSpore's name: Float32, Int64, ... ("str" for strings)
    chunks: list[tuple[int, int]] = field(default_factory=list)  # (file offset, byte length)

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return sum(n for _, n in self.chunks)


@dataclass
class CheckpointIndex:
    path: str
    format: str  # ckpt | safetensors
    size: int
    tensors: dict[str, TensorEntry]

    def blocks(self, name: str, max_elements: int) -> Iterator[np.ndarray]:
        """A numeric tensor as flat runs of consecutive elements, at most `max_elements` each (BFloat16
        widened to float32): two tensors of one shape give aligned runs, and memory stays bounded
        however large the tensor is."""
        e = self.tensors[name]
        want = max(1, max_elements) * np.dtype(CKPT_DTYPES[e.dtype]).itemsize
        buf = bytearray()
        with open(self.path, "rb") as f:
            for off, n in e.chunks:
                f.seek(off)
                while n:
                    part = f.read(min(n, want - len(buf)))
                    if not part:
                        raise bad_checkpoint(self.path, f"{name}: the file ended while it was read (it shrank?)")
                    buf += part
                    n -= len(part)
                    if len(buf) == want:
                        yield _as_array(bytes(buf), e.dtype)
                        buf.clear()
        if buf:
            yield _as_array(bytes(buf), e.dtype)

    def read(self, name: str, f: BinaryIO | None = None) -> np.ndarray:
        """One tensor as a numpy array (BFloat16 widened to float32); strings come back as 0-d str arrays.
        Read from `f` when given (the file open once for many tensors), else from the path."""
        e = self.tensors[name]
        with open(self.path, "rb") if f is None else contextlib.nullcontext(f) as f:
            parts = []
            for off, n in e.chunks:
                f.seek(off)
                parts.append(f.read(n))
        raw = b"".join(parts)
        if len(raw) != e.nbytes:
            raise bad_checkpoint(self.path, f"{name}: the file ended while it was read (it shrank?)")
        if e.dtype == "str":
            return np.array(raw.decode("utf-32-le", errors="replace").rstrip("\x00"))
        arr = np.frombuffer(raw, dtype=CKPT_DTYPES[e.dtype]).reshape(e.shape)
        if e.dtype == "BFloat16":
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        return arr


def _as_array(raw: bytes, dtype: str) -> np.ndarray:
    arr = np.frombuffer(raw, dtype=CKPT_DTYPES[dtype])
    return (arr.astype(np.uint32) << 16).view(np.float32) if dtype == "BFloat16" else arr


MAX_DIMS = 32  # numpy's limit (1.x)
MAX_NAME_BYTES = 1 << 16  # a tensor name or type string longer than this is not a checkpoint's


def check_dims(name: str, shape: list[int]) -> None:
    """At most MAX_DIMS dimensions, none negative (checked before any product is taken)."""
    if len(shape) > MAX_DIMS:
        raise ValueError(f"{name}: {len(shape)} dimensions (at most {MAX_DIMS})")
    if any(d < 0 for d in shape):
        raise ValueError(f"{name}: impossible shape {shape} (a negative dimension)")


def check_shape(name: str, shape: list[int], dtype: str, size: int) -> None:
    """A shape no file of `size` bytes can hold is a damaged or hostile one: besides check_dims, one
    whose dimensions (the zeros left out, so that [0, 10**20] counts too) need more bytes than the
    whole file. numpy could not even build such an array."""
    check_dims(name, shape)
    item = np.dtype(CKPT_DTYPES[dtype]).itemsize if dtype != "str" else 1
    if math.prod(d for d in shape if d) * item > size:
        raise ValueError(
            f"{name}: impossible shape {shape} {dtype}: its dimensions need more bytes than the whole {size}-byte file"
        )


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("varint runs past its message")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


class _Reader:
    """Varints and length-delimited fields read straight from the file, so a tensor's bytes are skipped,
    not read, while indexing."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f

    def varint(self) -> int:
        result = shift = 0
        while True:
            b = self.f.read(1)
            if not b:
                raise EOFError
            result |= (b[0] & 0x7F) << shift
            if not b[0] & 0x80:
                return result
            shift += 7
            if shift > 63:
                raise ValueError("varint longer than 10 bytes")


def _index_ckpt(path: str, size: int) -> dict[str, TensorEntry]:
    tensors: dict[str, TensorEntry] = {}
    with open(path, "rb") as f:
        end = size
        f.seek(max(0, size - CRC_TRAILER))
        if size >= CRC_TRAILER and f.read(7) == b"crc_num":
            end = size - CRC_TRAILER
        f.seek(0)
        r = _Reader(f)
        last = None
        while f.tell() < end:
            start = f.tell()
            try:
                key = r.varint()
                if key != 0x0A:  # field 1, length-delimited: Checkpoint.value
                    raise ValueError(
                        f"byte {start}: expected a checkpoint entry, found field {key >> 3} type {key & 7}"
                    )
                vlen = r.varint()
                vstart = f.tell()
                if vstart + vlen > end:
                    raise EOFError
                # The value holds the tag and the tensor header before the content; read the header
                # part only (tag and type strings, dims): the content is located, not read.
                name, tensor = None, None
                while f.tell() < vstart + vlen:
                    k = r.varint()
                    if k & 7 != 2:
                        raise ValueError(f"byte {f.tell()}: unexpected wire type {k & 7} in an entry")
                    n = r.varint()
                    fstart = f.tell()
                    if fstart + n > vstart + vlen:
                        raise ValueError(f"byte {fstart}: a field runs past its entry")
                    if k >> 3 == 1:
                        if n > MAX_NAME_BYTES:
                            raise ValueError(f"byte {fstart}: a {n}-byte tensor name")
                        name = f.read(n).decode("utf-8")
                    elif k >> 3 == 2:
                        tensor = _tensor_header(f, fstart, n)
                    elif k >> 3 == 3:
                        raise ValueError(f"map tensors are not supported ({name})")
                    else:
                        raise ValueError(f"byte {fstart}: unknown entry field {k >> 3}")
                    f.seek(fstart + n)
                if name is None or tensor is None:
                    raise ValueError(f"byte {start}: an entry without a name or a tensor")
            except EOFError:
                raise ValueError(
                    f"cut off at byte {size}: the entry starting at byte {start} "
                    f"{'(after ' + repr(last) + ') ' if last else ''}runs past the end (truncated?)"
                ) from None
            except UnicodeDecodeError:
                raise ValueError(f"byte {start}: an entry name that is not UTF-8") from None
            dims, ttype, coff, clen = tensor
            if ttype != "str" and ttype not in CKPT_DTYPES:
                raise ValueError(f"{name}: unknown tensor type {ttype!r}")
            if name in tensors and last == name:  # a split tensor's next slice
                tensors[name].chunks.append((coff, clen))
            elif name in tensors:
                raise ValueError(f"{name} appears twice")
            else:
                tensors[name] = TensorEntry(name, dims, ttype, [(coff, clen)])
            last = name
    for e in tensors.values():
        if e.shape == [0] and e.nbytes:  # MindSpore writes a scalar's dims as [0]
            e.shape = []
        check_dims(e.name, e.shape)
        if e.dtype != "str":
            want = e.elements * np.dtype(CKPT_DTYPES[e.dtype]).itemsize
            if e.nbytes != want:
                raise ValueError(f"{e.name}: {e.nbytes} bytes of data for shape {e.shape} {e.dtype} ({want} expected)")
        check_shape(e.name, e.shape, e.dtype, size)
    return tensors


def _tensor_header(f: BinaryIO, start: int, length: int) -> tuple[list[int], str, int, int]:
    """Parse a TensorProto in the file at `start`, reading everything but tensor_content."""
    f.seek(start)
    dims: list[int] = []
    ttype, content = None, None
    end = start + length
    r = _Reader(f)
    while f.tell() < end:
        k = r.varint()
        fnum, wtype = k >> 3, k & 7
        if fnum == 1 and wtype == 0:
            v = r.varint()
            dims.append(v - (1 << 64) if v >= 1 << 63 else v)
            if len(dims) > MAX_DIMS:
                raise ValueError(f"byte {f.tell()}: more than {MAX_DIMS} dimensions")
            continue
        if wtype != 2:
            raise ValueError(f"byte {f.tell()}: unexpected wire type {wtype} in a tensor")
        n = r.varint()
        pos = f.tell()
        if pos + n > end:
            raise ValueError(f"byte {pos}: a tensor field runs past its tensor")
        if fnum == 1:
            if n > MAX_DIMS * 10:
                raise ValueError(f"byte {pos}: {n} bytes of dimensions (at most {MAX_DIMS} dimensions)")
            buf, p = f.read(n), 0
            while p < n:
                v, p = _varint(buf, p)
                dims.append(v - (1 << 64) if v >= 1 << 63 else v)  # int64, as in the unpacked form
        elif fnum == 2:
            if n > MAX_NAME_BYTES:
                raise ValueError(f"byte {pos}: a {n}-byte tensor type")
            ttype = f.read(n).decode("utf-8")
        elif fnum == 3:
            content = (pos, n)
        else:
            raise ValueError(f"byte {pos}: unknown tensor field {fnum}")
        f.seek(pos + n)
    if ttype is None or content is None:
        raise ValueError(f"byte {start}: a tensor without type or content")
    return dims, ttype, content[0], content[1]


def _index_safetensors(path: str, size: int) -> dict[str, TensorEntry]:
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise ValueError("shorter than a safetensors header")
        (hlen,) = struct.unpack("<Q", head)
        if hlen > size - 8 or hlen > 100 << 20:
            raise ValueError(f"header length {hlen} does not fit in the {size}-byte file (truncated?)")
        try:
            header = json.loads(f.read(hlen))
        except (ValueError, UnicodeDecodeError):
            raise ValueError("the safetensors header is not JSON") from None
    if not isinstance(header, dict):
        raise ValueError("the safetensors header is not a JSON object")
    base = 8 + hlen
    tensors: dict[str, TensorEntry] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype = SAFETENSORS_DTYPES[info["dtype"]]
            shape, offsets = list(info["shape"]), list(info["data_offsets"])
            if not all(isinstance(x, int) and not isinstance(x, bool) for x in shape + offsets) or len(offsets) != 2:
                raise ValueError
            s, e = offsets
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{name}: bad header entry {str(info)[:80]}") from None
        check_dims(name, shape)
        if not 0 <= s <= e or base + e > size:
            raise ValueError(f"{name}: data at bytes {base + s}-{base + e} past the end ({size} bytes; truncated?)")
        want = math.prod(shape) * np.dtype(CKPT_DTYPES[dtype]).itemsize
        if e - s != want:
            raise ValueError(f"{name}: {e - s} bytes of data for shape {shape} {dtype} ({want} expected)")
        check_shape(name, shape, dtype, size)
        tensors[name] = TensorEntry(name, shape, dtype, [(base + s, e - s)])
    return tensors


def read_index(path: str) -> CheckpointIndex:
    """The tensors of a .ckpt or .safetensors file; ToolError(bad_checkpoint) with the reason otherwise."""
    if not os.path.exists(path):
        raise ToolError(
            "bad_checkpoint",
            f"file not found: {path}",
            file=os.path.abspath(path),
            why="checkpoint_not_found",
            params={"path": path},
        )
    if not os.path.isfile(path):
        raise bad_checkpoint(path, "not a regular file")
    size = os.path.getsize(path)
    if size == 0:
        raise bad_checkpoint(path, "the file is empty (0 bytes)")
    fmt = "safetensors" if path.endswith(".safetensors") else "ckpt"
    try:
        tensors = _index_safetensors(path, size) if fmt == "safetensors" else _index_ckpt(path, size)
    except OSError as e:
        raise bad_checkpoint(path, f"cannot read it: {e.strerror or e}") from e
    except ValueError as e:
        raise bad_checkpoint(path, f"not a MindSpore {fmt} file, or a damaged one: {e}") from e
    if not tensors:
        raise bad_checkpoint(path, "it holds no tensors")
    declared = sum(e.nbytes for e in tensors.values())
    stored = stored_bytes(path)
    if stored is not None and declared > SPARSE_FACTOR * stored + SPARSE_SLACK:
        raise bad_checkpoint(
            path,
            f"its tensors declare {declared} bytes of data but only {stored} bytes of the {size}-byte file "
            "are stored on disk (a sparse file: its size is not its data)",
        )
    return CheckpointIndex(os.path.abspath(path), fmt, size, tensors)


# A file whose tensors declare more than SPARSE_FACTOR times the bytes its file system stores for it
# (plus SPARSE_SLACK) is refused: a sparse file (`truncate -s 20G`) has the size the index checks
# want without the data, and would cost a full read of zeros (compare, inspect's hash).
# Compressing file systems (ZFS, btrfs) store less than the size too; weights compress far less
# than 2x, so only a file that is mostly zeros trips this there.
SPARSE_FACTOR = 2
SPARSE_SLACK = 1 << 20


def stored_bytes(path: str) -> int | None:
    """The bytes the file system stores for the file (st_blocks), or None where it does not say."""
    st = os.stat(path)
    blocks = getattr(st, "st_blocks", None)
    return blocks * 512 if blocks else None
