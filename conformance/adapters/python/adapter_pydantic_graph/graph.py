"""The reference workflow as a pydantic-graph 1.x graph, written the way its documentation writes
a human-in-the-loop graph: the node that needs input (Approval) is returned but not run; the
driver stops iterating there, and on resume takes the pending snapshot with load_next() and
continues with a new node that carries the answer (Decide). The state is the strict pydantic
mirror; nodes mutate it in place, as pydantic-graph nodes do.

Version 2 of the workflow (the definition-change probe) renames the last node: Decide2 (still
node id "Decide") leads to NotifyCustomer instead of Notify.
"""

from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic_graph import BaseNode, End, GraphRunContext
from pydantic_graph.graph import Graph

from remit_conformance.faults import FaultSwitch
from remit_conformance.sink import EffectSink
from remit_conformance.workflow import ApprovalValue, RefundState, charge_result, notify_result, refund_for

#: pydantic-graph node id -> the reference workflow's node name
NODE_NAMES = {"Compute": "compute", "Charge": "charge", "Approval": "approval", "Decide": "approval", "Notify": "notify", "NotifyCustomer": "notify"}


@dataclass
class Deps:
    sink: Callable[[], EffectSink]
    faults: FaultSwitch
    run_id: str


Ctx = GraphRunContext[RefundState, Deps]


def run_effect(ctx: Ctx, node: str, key: str) -> None:
    deps = ctx.deps
    deps.sink().invoke(node, key, deps.run_id)
    deps.faults.hit(f"in-handler-before-effect:{node}")
    deps.sink().apply(node, key, deps.run_id)
    deps.faults.hit(f"in-handler-after-effect:{node}")


@dataclass
class Compute(BaseNode[RefundState, Deps, str]):
    async def run(self, ctx: Ctx) -> "Charge":
        ctx.deps.sink().pure("compute", ctx.deps.run_id)
        ctx.deps.faults.hit("inside-pure:compute")
        ctx.state.refundCents = refund_for(ctx.state.amountCents)
        ctx.state.visited = [*ctx.state.visited, "compute"]
        return Charge()


@dataclass
class Charge(BaseNode[RefundState, Deps, str]):
    async def run(self, ctx: Ctx) -> "Approval":
        # The key of this execution: the run plus this node's snapshot id (the same when that
        # snapshot runs again, new in another run).
        run_effect(ctx, "charge", f"{ctx.deps.run_id}/{self.get_snapshot_id()}")
        refund = ctx.state.refundCents if ctx.state.refundCents is not None else -1
        ctx.state.chargeId = charge_result(ctx.state.orderId, refund)
        ctx.state.visited = [*ctx.state.visited, "charge"]
        return Approval(question=f"refund {ctx.state.refundCents} cents for {ctx.state.orderId}?")


@dataclass
class Approval(BaseNode[RefundState, Deps, str]):
    """The node that needs a human: the driver stops before running it."""

    question: str = ""

    async def run(self, ctx: Ctx) -> "Decide":
        raise RuntimeError("bug: Approval is never run; the driver resumes with Decide(answer)")


@dataclass
class Decide(BaseNode[RefundState, Deps, str]):
    """Carries the human's answer and validates it against the approval schema."""

    answer: Any = field(default=None)

    def apply(self, ctx: Ctx) -> None:
        value = ApprovalValue.model_validate(self.answer)  # raises ValidationError naming the field
        ctx.state.decision = value
        ctx.state.visited = [*ctx.state.visited, "approval"]

    async def run(self, ctx: Ctx) -> "Notify":
        self.apply(ctx)
        return Notify()


async def notify(node: BaseNode, ctx: Ctx) -> End[str]:
    run_effect(ctx, "notify", f"{ctx.deps.run_id}/{node.get_snapshot_id()}")
    approved = ctx.state.decision.approved if ctx.state.decision is not None else False
    ctx.state.notificationId = notify_result(ctx.state.orderId, approved)
    ctx.state.visited = [*ctx.state.visited, "notify"]
    return End(ctx.state.notificationId)


@dataclass
class Notify(BaseNode[RefundState, Deps, str]):
    async def run(self, ctx: Ctx) -> End[str]:
        return await notify(self, ctx)


@dataclass
class Decide2(Decide):
    @classmethod
    def get_node_id(cls) -> str:
        return "Decide"

    async def run(self, ctx: Ctx) -> "NotifyCustomer":
        self.apply(ctx)
        return NotifyCustomer()


@dataclass
class NotifyCustomer(BaseNode[RefundState, Deps, str]):
    async def run(self, ctx: Ctx) -> End[str]:
        return await notify(self, ctx)


def build_graph(version: int = 1) -> tuple[Graph, type]:
    """The graph and the node class that resumes it with an answer."""
    if version == 1:
        return Graph(nodes=[Compute, Charge, Approval, Decide, Notify], state_type=RefundState, run_end_type=str, name="refund"), Decide
    return Graph(nodes=[Compute, Charge, Approval, Decide2, NotifyCustomer], state_type=RefundState, run_end_type=str, name="refund"), Decide2
