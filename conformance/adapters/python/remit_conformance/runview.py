"""RunView helpers shared by the Python adapters (the RunView of conformance/README.md)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Optional

from .catalogue import EFFECT_NODES


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def digest(value: Any) -> str:
    return hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()


def record_hex(*parts: Any) -> str:
    """Length-prefixed concatenation of a stored row's columns, hex (the same framing as the
    LangGraph.js adapter): equal rows give equal bytes, any change in any column shows."""
    out = bytearray()
    for p in parts:
        if p is None:
            b = b""
        elif isinstance(p, (bytes, bytearray, memoryview)):
            b = bytes(p)
        else:
            b = str(p).encode("utf-8")
        out += f"{len(b)}:".encode("ascii") + b
    return out.hex()


def effects_done(completed_nodes: list[str]) -> list[str]:
    return [n for n in completed_nodes if n in EFFECT_NODES]


def run_view(
    *,
    run_id: str,
    records: list[dict[str, str]],
    normalized: list[Any],
    status: str,
    completed_nodes: list[str],
    claims: int,
    states: list[Any],
    head_state: Any,
    next_action: str,
    recoveries: dict[str, str],
    integrity: Optional[dict[str, Any]] = None,
    effects: Optional[list[str]] = None,
) -> dict[str, Any]:
    if status not in ("absent", "empty", "running", "parked", "completed", "failed", "invalid"):
        raise RuntimeError(f"bug: run status {status!r}")
    return {
        "runId": run_id,
        "exists": bool(records),
        "records": records,
        "normalized": normalized,
        "status": status,
        "integrity": integrity if integrity is not None else {"ok": True},
        "completedNodes": completed_nodes,
        "effectsDone": effects if effects is not None else effects_done(completed_nodes),
        "claims": claims,
        "states": states,
        "headState": head_state,
        "nextAction": next_action,
        "recoveries": recoveries,
    }


def absent_view(run_id: str) -> dict[str, Any]:
    return run_view(
        run_id=run_id, records=[], normalized=[], status="absent", completed_nodes=[], claims=0,
        states=[], head_state=None, next_action="NONE", recoveries={},
    )


# Outcomes ---------------------------------------------------------------------------------------

def parked(state: Any) -> dict[str, Any]:
    return {"outcome": "parked", "state": state}


def completed(state: Any) -> dict[str, Any]:
    return {"outcome": "completed", "state": state}


def refused(code: str, message: str, field: Optional[str] = None) -> dict[str, Any]:
    refusal: dict[str, Any] = {"code": code, "message": message}
    if field is not None:
        refusal["field"] = field
    return {"outcome": "refused", "refusal": refusal}


def error(kind: str, message: str, field: Optional[str] = None) -> dict[str, Any]:
    err: dict[str, Any] = {"kind": kind, "message": message}
    if field is not None:
        err["field"] = field
    return {"outcome": "error", "error": err}
