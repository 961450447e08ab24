"""The reference workflow written the way a LangGraph (Python) user writes it: a StateGraph over
the strict pydantic state model, effects inside nodes, the approval through interrupt(), the
resume value validated inside the approval node. Fault hooks sit where a user can put them:
inside node bodies and effect handlers."""

from __future__ import annotations

from typing import Any, Callable

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from remit_conformance.faults import FaultSwitch
from remit_conformance.sink import EffectSink
from remit_conformance.workflow import ApprovalValue, RefundState, charge_result, notify_result, refund_for


def thread_of(config: RunnableConfig) -> str:
    thread = (config.get("configurable") or {}).get("thread_id")
    if not isinstance(thread, str):
        raise RuntimeError("node called without a thread_id")
    return thread


def effect_key(config: RunnableConfig, node: str) -> str:
    """Thread plus LangGraph's task namespace ("node:<task id>"): the task id derives from the
    checkpoint the task runs from, so a retry from that checkpoint reuses the key and a fork gets
    a new one."""
    ns = (config.get("metadata") or {}).get("langgraph_checkpoint_ns") or (config.get("configurable") or {}).get("checkpoint_ns")
    if not isinstance(ns, str) or not ns:
        raise RuntimeError(f"no task namespace for {node}")
    return f"{thread_of(config)}/{ns}"


def build_graph(sink: Callable[[], EffectSink], faults: FaultSwitch, checkpointer: Any, notify_node: str = "notify"):
    """`notify_node` is the last node's name; the definition-change probe renames it."""

    def run_effect(config: RunnableConfig, node: str) -> None:
        key = effect_key(config, node)
        run = thread_of(config)
        sink().invoke(node, key, run)
        faults.hit(f"in-handler-before-effect:{node}")
        sink().apply(node, key, run)
        faults.hit(f"in-handler-after-effect:{node}")

    def compute(s: RefundState, config: RunnableConfig) -> dict:
        sink().pure("compute", thread_of(config))
        faults.hit("inside-pure:compute")
        return {"refundCents": refund_for(s.amountCents), "visited": [*s.visited, "compute"]}

    def charge(s: RefundState, config: RunnableConfig) -> dict:
        run_effect(config, "charge")
        return {"chargeId": charge_result(s.orderId, s.refundCents if s.refundCents is not None else -1), "visited": [*s.visited, "charge"]}

    def approval(s: RefundState) -> dict:
        raw = interrupt({"question": f"refund {s.refundCents} cents for {s.orderId}?"})
        value = ApprovalValue.model_validate(raw)  # raises ValidationError naming the field
        return {"decision": value.model_dump(), "visited": [*s.visited, "approval"]}

    def notify(s: RefundState, config: RunnableConfig) -> dict:
        run_effect(config, notify_node)
        approved = s.decision.approved if s.decision is not None else False
        return {"notificationId": notify_result(s.orderId, approved), "visited": [*s.visited, "notify"]}

    graph = StateGraph(RefundState)
    graph.add_node("compute", compute)
    graph.add_node("charge", charge)
    graph.add_node("approval", approval)
    graph.add_node(notify_node, notify)
    graph.add_edge(START, "compute")
    graph.add_edge("compute", "charge")
    graph.add_edge("charge", "approval")
    graph.add_edge("approval", notify_node)
    graph.add_edge(notify_node, END)
    return graph.compile(checkpointer=checkpointer)
