"""The Python side of the catalogue drift test (conformance/harness/catalogue.test.ts).

Reads JSON requests, one per line, and answers each on one line:
  {"op": "catalogue"}                        -> what the Python side takes from the catalogue
  {"op": "validate", "schema": s, "value": v} -> {"ok": bool, "paths": [[...], ...]} (pydantic's error locations)
      ("lax": true validates in pydantic's default lax mode: the drift test's canary, which must
      find differences)
  {"op": "rules", "input": {...}, "approved": b} -> the workflow rules' results for that input
Run: <venv>/bin/python -m remit_conformance.selfcheck
"""

from __future__ import annotations

import json
import sys

from pydantic import ValidationError

from .catalogue import EFFECT_NODES, FAULT_KINDS, FAULT_POINT_NAMES, NODE_PATH, STATE_FIELDS
from .workflow import SCHEMAS, charge_result, notify_result, refund_for


def answer(request: dict) -> dict:
    op = request.get("op")
    if op == "catalogue":
        return {"faultPoints": FAULT_POINT_NAMES, "faultKinds": FAULT_KINDS, "nodePath": NODE_PATH,
                "effectNodes": EFFECT_NODES, "stateFields": STATE_FIELDS,
                "schemaFields": {name: list(model.model_fields) for name, model in SCHEMAS.items()}}
    if op == "validate":
        model = SCHEMAS[request["schema"]]
        try:
            model.model_validate(request["value"], strict=False if request.get("lax") else None)
            return {"ok": True, "paths": []}
        except ValidationError as e:
            return {"ok": False, "paths": sorted({json.dumps(list(err["loc"])) for err in e.errors()})}
    if op == "rules":
        inp = request["input"]
        refund = refund_for(inp["amountCents"])
        return {"refundCents": refund, "chargeId": charge_result(inp["orderId"], refund),
                "notificationId": notify_result(inp["orderId"], bool(request["approved"]))}
    raise ValueError(f"unknown op {op!r}")


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(answer(json.loads(line)), separators=(",", ":")) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
