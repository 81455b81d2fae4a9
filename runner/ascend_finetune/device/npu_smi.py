"""Parsers for Huawei's `npu-smi` text output (stdlib only, Python 3.9+).

`parse_info(text)` reads `npu-smi info`: a box table with two rows per chip, then a process table.

    | NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
    | Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
    | 0     910B3               | OK            | 121.6       40                0    / 0             |
    | 0                         | 0000:C1:00.0  | 10          0    / 0          57895/ 65536         |

What varies between cards and driver releases (all seen in the recorded outputs under
test/runner/fixtures/npu-smi/):
- the second header row names the chip column `Chip`, `Chip  Phy-ID` (Atlas A3: two chips per NPU,
  the second one prints `-` for power) or `Chip    Device` (310 / 310P cards, several chips per card);
- 310/310P cards have no `HBM-Usage(MB)` column, only `Memory-Usage(MB)`, and print `NA` for power;
- the oldest releases have no `Hugepages-Usage(page)` column and no version line;
- column widths change (26.x prints wider columns and adds `Process id in container`);
- a large used value loses the space before `/` (`57895/ 65536`).

The third cell of each row is read against the labels of the matching header row, so a missing or
extra column is mapped by name rather than by position in a fixed layout.

`parse_usages(text)` reads `npu-smi info -t usages -i N`: `Key : value` lines, one block per chip,
each ending with `Chip ID : n`; the key names vary by card and driver, see `_USAGE_KEYS`.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["UnknownFormat", "parse_info", "parse_usages"]


class UnknownFormat(ValueError):
    """The text is not an `npu-smi` output this module knows how to read."""


_BUS_ID = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")
_VERSION = re.compile(r"npu-smi\s+(\S+)\s+Version:\s*(\S+)")
# One value or a "used / total" pair, however the spaces around "/" fell.
_ITEM = re.compile(r"([^\s/]+)\s*/\s*([^\s/]+)|([^\s/]+)")
_LABEL = re.compile(r"[A-Za-z][\w-]*(?:\([^)]*\))?")
_MISSING = {"", "-", "--", "NA", "N/A", "na", "n/a"}

# Defaults when a header row is missing (a fragment of the table).
_ROW1_LABELS = ["Power(W)", "Temp(C)", "Hugepages-Usage(page)"]
_ROW2_LABELS = ["AICore(%)", "Memory-Usage(MB)", "HBM-Usage(MB)"]


def _num(s: str | None) -> float | None:
    if s is None or s.strip() in _MISSING:
        return None
    try:
        return float(s)
    except ValueError:
        return None


def _int(s: str | None) -> int | None:
    if s is None:
        return None
    s = s.strip()
    return int(s) if s.isdigit() else None


def _items(cell: str) -> list[Any]:
    """'121.6  40  0    / 0' -> ['121.6', '40', ('0', '0')]."""
    out: list[Any] = []
    for m in _ITEM.finditer(cell):
        out.append((m.group(1), m.group(2)) if m.group(1) is not None else m.group(3))
    return out


def _labels(cell: str) -> list[str]:
    return _LABEL.findall(cell)


def _by_label(labels: list[str], items: list[Any]) -> dict[str, Any]:
    """Pairs the values of a row's third cell with the header's labels, lower-cased, unit-less."""
    out: dict[str, Any] = {}
    for label, item in zip(labels, items):
        out[label.split("(")[0].lower()] = item
    return out


def _cells(line: str) -> list[str]:
    parts = line.strip().split("|")
    return [p.strip() for p in parts[1:-1]] if len(parts) >= 3 else []


def _pair(v: Any) -> tuple:
    if isinstance(v, tuple):
        return _num(v[0]), _num(v[1])
    return None, None


def _single(v: Any) -> float | None:
    return None if isinstance(v, tuple) else _num(v)


def parse_info(text: str) -> dict[str, Any]:
    """`npu-smi info` -> {"devices": [...], "processes": [...], "version": str|None}.

    One device per chip row (an A3 NPU or a 300I Duo card lists two), each {id (NPU id), chip,
    phy_id (A3's "Phy-ID"), device_id (310/310P's "Device"), name, health, power_w, temp_c, util
    (AICore %), hbm_used_mb, hbm_total_mb, memory_used_mb, memory_total_mb, bus_id}; a field the
    card does not print is None. Processes: {npu, chip, pid, name, memory_mb}. Raises
    UnknownFormat when the text has neither the device table's header nor any device row.
    """
    if not isinstance(text, str):
        raise UnknownFormat(f"expected text, got {type(text).__name__}")
    version: str | None = None
    devices: list[dict[str, Any]] = []
    processes: list[dict[str, Any]] = []
    row1_labels, row2_labels = list(_ROW1_LABELS), list(_ROW2_LABELS)
    second_id = "phy_id"  # what the chip cell's second number is: "Chip  Phy-ID" or "Chip    Device"
    saw_header = False
    section = "devices"
    pending: dict[str, Any] | None = None  # an NPU row waiting for its chip row
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith("|"):
            continue  # borders, comments, anything outside the box
        m = _VERSION.search(line)
        if m:
            version = m.group(2)
            continue
        cells = _cells(line)
        if not cells:
            continue
        first = cells[0]
        if first.startswith("NPU") and "Name" in first:
            saw_header, section = True, "devices"
            if len(cells) >= 3:
                row1_labels = _labels(cells[2]) or row1_labels
            continue
        if first.startswith("Chip") and len(cells) >= 3 and "Bus-Id" in cells[1]:
            row2_labels = _labels(cells[2]) or row2_labels
            second_id = "device_id" if "Device" in first else "phy_id"
            continue
        if any("Process id" in c for c in cells):
            section = "processes"
            continue
        if section == "processes":
            if first.startswith("No running processes"):
                continue
            if len(cells) >= 4:
                ids = first.split()
                pid = _int(cells[1])
                if ids and ids[0].isdigit() and pid is not None:
                    processes.append(
                        {
                            "npu": int(ids[0]),
                            "chip": int(ids[1]) if len(ids) > 1 and ids[1].isdigit() else None,
                            "pid": pid,
                            "name": cells[2],
                            "memory_mb": _num(cells[3]),
                        }
                    )
            continue
        if len(cells) < 3:
            continue
        ids = first.split()
        if not ids or not ids[0].isdigit():
            continue
        if pending is None or not (_BUS_ID.match(cells[1]) or cells[1] in _MISSING):
            # An NPU row: "<npu id> <name>" | health | power temp hugepages.
            if pending is not None:
                devices.append(_device(pending, None))
            pending = {"ids": ids, "health": cells[1], "rest": _by_label(row1_labels, _items(cells[2]))}
        else:
            devices.append(
                _device(
                    pending,
                    {
                        "ids": ids,
                        "bus": cells[1],
                        "second": second_id,
                        "rest": _by_label(row2_labels, _items(cells[2])),
                    },
                )
            )
            pending = None
    if pending is not None:
        devices.append(_device(pending, None))
    if not devices and not saw_header:
        first_line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        raise UnknownFormat(
            f"not an npu-smi info table: {first_line[:200]!r}" if first_line else "empty npu-smi output"
        )
    return {"devices": devices, "processes": processes, "version": version}


def _device(npu: dict[str, Any], chip: dict[str, Any] | None) -> dict[str, Any]:
    ids = npu["ids"]
    r1 = npu["rest"]
    r2 = chip["rest"] if chip else {}
    cids = chip["ids"] if chip else []
    second = int(cids[1]) if len(cids) > 1 and cids[1].isdigit() else None
    hp_used, hp_total = _pair(r1.get("hugepages-usage"))
    mem_used, mem_total = _pair(r2.get("memory-usage"))
    hbm_used, hbm_total = _pair(r2.get("hbm-usage"))
    return {
        "id": int(ids[0]),
        "chip": int(cids[0]) if cids and cids[0].isdigit() else None,
        "phy_id": second if chip and chip["second"] == "phy_id" else None,
        "device_id": second if chip and chip["second"] == "device_id" else None,
        "name": " ".join(ids[1:]) or None,
        "health": npu["health"] or None,
        "power_w": _single(r1.get("power")),
        "temp_c": _single(r1.get("temp")),
        "util": _single(r2.get("aicore")),
        "hbm_used_mb": hbm_used,
        "hbm_total_mb": hbm_total,
        "memory_used_mb": mem_used,
        "memory_total_mb": mem_total,
        "bus_id": chip["bus"] if chip and chip["bus"] not in _MISSING else None,
    }


# `npu-smi info -t usages` keys, squeezed (lower case, no spaces), to stable names. Others are kept
# under their printed key; any "<X> Usage Rate(%)" not listed becomes "<x>_util".
_USAGE_KEYS = {
    "npuid": "npu",
    "chipcount": "chip_count",
    "chipid": "chip",
    "hbmusagerate(%)": "hbm_util",
    "hbmcapacity(mb)": "hbm_total_mb",
    "hbmbandwidthusagerate(%)": "hbm_bw_util",
    "aicoreusagerate(%)": "aicore_util",
    "aivectorusagerate(%)": "vector_util",
    "vectorcoreusagerate(%)": "vector_util",
    "aicubeusagerate(%)": "aicube_util",
    "aicpuusagerate(%)": "aicpu_util",
    "ctrlcpuusagerate(%)": "ctrlcpu_util",
    "memoryusagerate(%)": "memory_util",
    "ddrusagerate(%)": "ddr_util",
    "ddrcapacity(mb)": "ddr_total_mb",
    "ddrbandwidthusagerate(%)": "ddr_bw_util",
    "ddrhugepagestotal(page)": "hugepages_total",
    "ddrhugepagesusagerate(%)": "hugepages_util",
    "npuutilization(%)": "npu_util",
}
_INT_KEYS = {"npu", "chip", "chip_count"}


def _usage_key(key: str) -> str:
    squeezed = re.sub(r"\s+", "", key).lower()
    if squeezed in _USAGE_KEYS:
        return _USAGE_KEYS[squeezed]
    m = re.match(r"^(.*?)\s*usage\s*rate\s*\(%\)$", key.strip(), re.IGNORECASE)
    if m:
        return re.sub(r"[^a-z0-9]+", "_", m.group(1).lower()).strip("_") + "_util"
    return key.strip()


def _usage_value(name: str, value: str) -> Any:
    v = value.strip()
    if name in _INT_KEYS:
        return int(v) if v.isdigit() else (None if v in _MISSING else v)
    n = _num(v)
    if n is not None:
        return n
    return None if v in _MISSING else v


def parse_usages(text: str) -> dict[str, Any]:
    """`npu-smi info -t usages -i N` -> {npu, chip_count, chips: [{chip, hbm_util, aicore_util, ...}],
    plus the first chip's fields at the top level}. Raises UnknownFormat when no `Key : value` line."""
    if not isinstance(text, str):
        raise UnknownFormat(f"expected text, got {type(text).__name__}")
    head: dict[str, Any] = {}
    chips: list[dict[str, Any]] = []
    cur: dict[str, Any] = {}
    seen = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or ":" not in line:
            continue
        key, value = line.split(":", 1)
        if not key.strip():
            continue
        seen = True
        name = _usage_key(key)
        val = _usage_value(name, value)
        if name in ("npu", "chip_count"):
            head[name] = val
        elif name == "chip":
            if cur and "chip" not in cur:  # usages: "Chip ID" closes its block
                cur["chip"] = val
                chips.append(cur)
                cur = {}
            else:  # other -t types print it first
                if cur:
                    chips.append(cur)
                cur = {"chip": val}
        else:
            cur[name] = val
    if cur:
        chips.append(cur)
    if not seen:
        first_line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        raise UnknownFormat(
            f"not npu-smi key : value output: {first_line[:200]!r}" if first_line else "empty npu-smi output"
        )
    out: dict[str, Any] = {"npu": head.get("npu"), "chip_count": head.get("chip_count")}
    if chips:
        out.update(chips[0])
    out["chips"] = chips
    return out
