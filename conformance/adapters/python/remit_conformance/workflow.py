"""Strict pydantic mirrors of the reference workflow's zod schemas, and its rules.

Strict mode, because pydantic's default (lax) mode coerces "yes" to True and "3" to 3, which
zod does not. Extra keys are ignored, as zod's z.object strips them. Integers carry zod's safe
integer bounds. The catalogue drift test (conformance/harness/catalogue.test.ts) sends the same
generated values through zod and through these models and fails on any difference.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import Annotated

from .catalogue import STATE_FIELDS, WORKFLOW, fill_format

MAX_SAFE_INTEGER = 9007199254740991
SafeNonNegativeInt = Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
STRICT = ConfigDict(strict=True, extra="ignore")


# zod counts a string's length in code points, as pydantic's min_length/max_length do (the drift
# test checks strings of 1- and 2-UTF-16-unit characters right at the bounds).
OrderId = Annotated[str, Field(min_length=1, max_length=64)]
Note = Annotated[str, Field(max_length=200)]


class ApprovalValue(BaseModel):
    model_config = STRICT
    approved: bool
    note: Note


class RefundInput(BaseModel):
    model_config = STRICT
    orderId: OrderId
    amountCents: SafeNonNegativeInt


class RefundState(BaseModel):
    """Every state that reaches a store must satisfy this (checkpoint validity)."""

    model_config = STRICT
    orderId: OrderId
    amountCents: SafeNonNegativeInt
    refundCents: Optional[SafeNonNegativeInt]
    chargeId: Optional[str]
    decision: Optional[ApprovalValue]
    notificationId: Optional[str]
    visited: list[str]


if list(RefundState.model_fields) != STATE_FIELDS:
    raise RuntimeError(f"bug: RefundState fields {list(RefundState.model_fields)} differ from the catalogue's {STATE_FIELDS}")

SCHEMAS: dict[str, type[BaseModel]] = {
    "approvalValue": ApprovalValue,
    "refundInput": RefundInput,
    "refundState": RefundState,
}


def initial_state(inp: RefundInput) -> dict[str, Any]:
    return {
        "orderId": inp.orderId,
        "amountCents": inp.amountCents,
        "refundCents": None,
        "chargeId": None,
        "decision": None,
        "notificationId": None,
        "visited": [],
    }


def refund_for(amount_cents: int) -> int:
    rule = WORKFLOW["feeRule"]
    fee = max(rule["minimumFeeCents"], amount_cents // rule["divisor"])
    return amount_cents - fee


def charge_result(order_id: str, refund_cents: int) -> str:
    return fill_format(WORKFLOW["chargeIdFormat"], orderId=order_id, refundCents=refund_cents)


def notify_result(order_id: str, approved: bool) -> str:
    words = WORKFLOW["notificationDecisionWords"]
    return fill_format(WORKFLOW["notificationIdFormat"], orderId=order_id, decision=words["approved" if approved else "rejected"])


def first_error_field(e: ValidationError) -> str:
    """The innermost field name of the first error (a framework may nest the model in a list or a
    snapshot: ("decision", "approved") -> "approved", (1, "state", "refundCents") -> "refundCents")."""
    errors = e.errors()
    loc = errors[0].get("loc", ()) if errors else ()
    names = [part for part in loc if isinstance(part, str)]
    return names[-1] if names else "(value)"


def state_of(values: Any) -> dict[str, Any]:
    """Exactly the reference state's fields, in order, with explicit nulls (frameworks omit unset
    channels or add their own fields such as CrewAI's id); nested models become plain JSON values."""
    if isinstance(values, BaseModel):
        values = values.model_dump(mode="json")
    if not isinstance(values, dict):
        return {field: None for field in STATE_FIELDS}
    out: dict[str, Any] = {}
    for field in STATE_FIELDS:
        v = values.get(field)
        out[field] = v.model_dump(mode="json") if isinstance(v, BaseModel) else v
    return out
