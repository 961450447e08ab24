"""The shared catalogue (conformance/catalogue.json), read by the Python adapters.

The TypeScript harness reads the same file (conformance/harness/catalogue.ts); neither side keeps
its own list of fault points or workflow rules.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CATALOGUE_PATH = Path(__file__).resolve().parents[3] / "catalogue.json"


def _load() -> dict[str, Any]:
    with CATALOGUE_PATH.open(encoding="utf-8") as f:
        data = json.load(f)
    if data.get("format") != "remit-conformance-catalogue/1":
        raise RuntimeError(f"{CATALOGUE_PATH}: unknown catalogue format {data.get('format')!r}")
    return data


CATALOGUE: dict[str, Any] = _load()
FAULT_KINDS: list[str] = list(CATALOGUE["faultKinds"])
FAULT_POINTS: list[dict[str, str]] = list(CATALOGUE["faultPoints"])
FAULT_POINT_NAMES: list[str] = [p["name"] for p in FAULT_POINTS]
WORKFLOW: dict[str, Any] = CATALOGUE["workflow"]
NODE_PATH: list[str] = [n["name"] for n in WORKFLOW["nodes"]]
EFFECT_NODES: list[str] = list(WORKFLOW["effectNodes"])
STATE_FIELDS: list[str] = list(WORKFLOW["stateFields"])


def fill_format(fmt: str, **values: Any) -> str:
    """Fill "ch_{orderId}_{refundCents}"-style formats; a missing value is a bug."""
    try:
        return fmt.format(**values)
    except KeyError as e:
        raise RuntimeError(f"bug: catalogue format {fmt!r} needs {e}") from e


def parse_point(name: str) -> tuple[str, str, str]:
    """'before-commit:EFFECT_DONE@charge' -> ('before-commit', 'EFFECT_DONE', 'charge')."""
    place, _, rest = name.partition(":")
    kind, _, node = rest.partition("@")
    return place, kind, node
