"""Turn what a framework stored (pydantic models, dataclasses, interrupts, bytes) into JSON values."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from pydantic import BaseModel


def jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=repr)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, datetime):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if hasattr(value, "value") and hasattr(value, "id"):  # langgraph.types.Interrupt
        return {"value": jsonable(value.value), "id": str(value.id)}
    return repr(value)
