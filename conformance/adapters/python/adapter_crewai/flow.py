"""The reference workflow as a CrewAI Flow, written the way CrewAI's documentation writes one:
a structured state with an `id`, `@persist` on the class (every method's completion is saved),
`@start`/`@listen` methods that mutate `self.state`, and the approval as a `@human_feedback`
method whose provider raises HumanFeedbackPending, which parks the flow (no language model:
llm=None and no `emit`). The human's answer arrives through resume(feedback) as text (JSON here);
the method listening to the approval validates it and records the decision.

Version 2 (the definition-change probe) renames the last method notify -> notify_customer.
"""

from __future__ import annotations

import json
from typing import Callable

from crewai.flow.async_feedback import HumanFeedbackPending
from crewai.flow.flow import Flow, listen, start
from crewai.flow.human_feedback import human_feedback
from crewai.flow.persistence import persist
from pydantic import BaseModel, create_model
from pydantic.fields import FieldInfo

from remit_conformance.faults import FaultSwitch
from remit_conformance.sink import EffectSink
from remit_conformance.workflow import STRICT, ApprovalValue, RefundState, charge_result, notify_result, refund_for

#: CrewAI builds a flow's state before kickoff's inputs arrive, so every field needs a default; the
#: defaults are placeholders that kickoff overwrites. Types and constraints are the mirror's own.
_DEFAULTS = {"orderId": "", "amountCents": 0, "refundCents": None, "chargeId": None, "decision": None, "notificationId": None, "visited": []}
FlowRefundState: type[BaseModel] = create_model(
    "FlowRefundState",
    __config__=STRICT,
    id=(str, ""),
    **{name: (info.annotation, FieldInfo.merge_field_infos(info, default=_DEFAULTS[name])) for name, info in RefundState.model_fields.items()},
)


class ParkingProvider:
    """A feedback provider for answers that arrive later: it parks the flow."""

    def request_feedback(self, context, flow):
        raise HumanFeedbackPending(context=context)


class Hooks:
    """Where the flow's methods reach the effect sink and the fault switch."""

    sink: Callable[[], EffectSink]
    faults: FaultSwitch


HOOKS = Hooks()


def run_effect(flow: Flow, node: str) -> None:
    # The key of this effect: flow id and method, the same whenever this flow runs the method again.
    key = f"{flow.state.id}/{node}"
    HOOKS.sink().invoke(node, key, flow.state.id)
    HOOKS.faults.hit(f"in-handler-before-effect:{node}")
    HOOKS.sink().apply(node, key, flow.state.id)
    HOOKS.faults.hit(f"in-handler-after-effect:{node}")


def _compute(self):
    HOOKS.sink().pure("compute", self.state.id)
    HOOKS.faults.hit("inside-pure:compute")
    self.state.refundCents = refund_for(self.state.amountCents)
    self.state.visited = [*self.state.visited, "compute"]


def _charge(self):
    run_effect(self, "charge")
    refund = self.state.refundCents if self.state.refundCents is not None else -1
    self.state.chargeId = charge_result(self.state.orderId, refund)
    self.state.visited = [*self.state.visited, "charge"]


def _approval(self):
    return {"question": f"refund {self.state.refundCents} cents for {self.state.orderId}?"}


def _record_decision(self):
    feedback = self.last_human_feedback.feedback if self.last_human_feedback else ""
    value = ApprovalValue.model_validate(json.loads(feedback))  # raises ValidationError naming the field
    self.state.decision = value
    self.state.visited = [*self.state.visited, "approval"]


def _notify(self):
    run_effect(self, "notify")
    approved = self.state.decision.approved if self.state.decision is not None else False
    self.state.notificationId = notify_result(self.state.orderId, approved)
    self.state.visited = [*self.state.visited, "notify"]


def make_flow(class_name: str, notify_method: str) -> type:
    """A Flow class whose last method is called `notify_method` (CrewAI reads a flow's methods
    from the class body, so each version is built as a class body of its own)."""
    namespace = {
        "__module__": __name__,
        "__qualname__": class_name,
        "compute": start()(_compute),
        "charge": listen("compute")(_charge),
        "approval": listen("charge")(human_feedback(message="Approve this refund?", llm=None, provider=ParkingProvider())(_approval)),
        "record_decision": listen("approval")(_record_decision),
        notify_method: listen("record_decision")(_notify),
    }
    flow_class = type(Flow[FlowRefundState])(class_name, (Flow[FlowRefundState],), namespace)
    return persist()(flow_class)


RefundFlow = make_flow("RefundFlow", "notify")
RefundFlowV2 = make_flow("RefundFlowV2", "notify_customer")


#: method name -> reference node; the methods no listener follows end a flow
METHOD_NODES = {"compute": "compute", "charge": "charge", "approval": "approval", "record_decision": "approval", "notify": "notify", "notify_customer": "notify"}
TERMINAL_METHODS = {"notify", "notify_customer"}
