"""Conformance adapter for CrewAI Flows with @persist on SQLite and the human-feedback pause.

Run: <venv>/bin/python -m adapter_crewai.adapter
(PYTHONPATH=conformance/adapters/python; speaks JSON lines on stdio, conformance/README.md). Run it
with CrewAI's telemetry, version check and tracing off and CREWAI_STORAGE_DIR set
(conformance/harness/systems.ts does).

Persistence points are reached by wrapping SQLiteFlowPersistence's writes: save_state (after each
method), save_pending_feedback (the pause), clear_pending_feedback (the resume consuming it). The
point a write is comes from the call and its method name, never from timing. Recovery after a
crash is CrewAI's documented one, kickoff(inputs={"id": flow_id}); a parked flow resumes through
Flow.from_pending(flow_id, persistence).resume(feedback).
"""

from remit_conformance import protocol  # first: takes stdout before any framework loads

import json
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, Optional

from crewai.flow.async_feedback import HumanFeedbackPending
from crewai.flow.persistence import SQLiteFlowPersistence

from remit_conformance.catalogue import FAULT_POINT_NAMES, parse_point
from remit_conformance.faults import INJECTED_STORE_ERROR, FaultSwitch
from remit_conformance.outcomes import outcome_of_error
from remit_conformance.protocol import error_message, probe_dispatcher, serve, string_arg, unsupported
from remit_conformance.runview import absent_view, canonical, completed, digest, parked, record_hex, refused, run_view
from remit_conformance.sink import SinkHolder
from remit_conformance.workflow import RefundInput, initial_state, state_of

from .flow import HOOKS, METHOD_NODES, TERMINAL_METHODS, FlowRefundState, RefundFlow, RefundFlowV2

PACKAGES = ["crewai", "pydantic"]
faults = FaultSwitch()
sinks = SinkHolder()
HOOKS.sink = lambda: sinks.sink
HOOKS.faults = faults

#: save_state(method_name) -> the catalogue records that one write is (they coincide in CrewAI)
SAVE_POINTS = {
    "compute": ["NODE_COMPLETED@compute"],
    "charge": ["EFFECT_DONE@charge", "NODE_COMPLETED@charge"],
    "record_decision": ["NODE_COMPLETED@approval"],
    "notify": ["EFFECT_DONE@notify", "NODE_COMPLETED@notify"],
}


def store_error() -> BaseException:
    return sqlite3.OperationalError(INJECTED_STORE_ERROR)


class FaultingPersistence(SQLiteFlowPersistence):
    """SQLiteFlowPersistence with the catalogue's points around its writes."""

    def save_state(self, flow_uuid, method_name, state_data):
        points = SAVE_POINTS.get(str(method_name), [])
        faults.hit_all([f"before-commit:{p}" for p in points], store_error)
        super().save_state(flow_uuid, method_name, state_data)
        faults.hit_all([f"after-commit:{p}" for p in points], store_error)

    def save_pending_feedback(self, flow_uuid, context, state_data):
        faults.hit("before-commit:INTERRUPT_PARKED@approval", store_error)
        super().save_pending_feedback(flow_uuid, context, state_data)
        faults.hit("after-commit:INTERRUPT_PARKED@approval", store_error)

    def clear_pending_feedback(self, flow_uuid):
        faults.hit("before-commit:RESUME_CLAIMED@approval", store_error)
        super().clear_pending_feedback(flow_uuid)
        faults.hit("after-commit:RESUME_CLAIMED@approval", store_error)


class Session:
    def __init__(self, store_path: str) -> None:
        self.store_path = store_path
        self.persistence = FaultingPersistence(store_path)


session: Optional[Session] = None


def current() -> Session:
    if session is None:
        raise RuntimeError('no store: "open" was not called')
    return session


def outcome_of_result(flow, result: Any) -> dict:
    state = state_of(flow.state)
    return parked(state) if isinstance(result, HumanFeedbackPending) else completed(state)


def kickoff(flow_class, inputs: dict, **kwargs) -> dict:
    flow = flow_class(persistence=current().persistence)
    try:
        return outcome_of_result(flow, flow.kickoff(inputs=inputs, **kwargs))
    except Exception as e:
        return outcome_of_error(e)


def resume(run_id: str, value: Any, flow_class=RefundFlow) -> dict:
    try:
        flow = flow_class.from_pending(run_id, current().persistence)
    except ValueError as e:
        if "No pending feedback" in str(e):
            return refused("NOT_PARKED", error_message(e))
        return outcome_of_error(e)
    try:
        return outcome_of_result(flow, flow.resume(json.dumps(value)))
    except Exception as e:
        return outcome_of_error(e)


def op_start(args: dict) -> dict:
    inp = RefundInput.model_validate(args.get("input"))
    return kickoff(RefundFlow, {"id": string_arg(args, "runId"), **initial_state(inp)})


def op_continue(args: dict) -> dict:
    run_id = string_arg(args, "runId")
    pending = current().persistence.load_pending_feedback(run_id)
    if pending is not None:
        return parked(state_of(pending[0]))
    # CrewAI's documented recovery: kickoff with the flow's id loads its latest state.
    return kickoff(RefundFlow, {"id": run_id})


def op_resume_many(args: dict) -> dict:
    run_id = string_arg(args, "runId")
    values = args.get("values") if isinstance(args.get("values"), list) else []
    barrier = threading.Barrier(len(values)) if values else None

    def one(value: Any) -> dict:
        barrier.wait()
        return resume(run_id, value)

    with ThreadPoolExecutor(max_workers=max(1, len(values))) as pool:
        return {"outcomes": list(pool.map(one, values))}


def op_fork(args: dict) -> dict:
    """CrewAI's fork: kickoff(restore_from_state_id=source) hydrates the source's latest state
    into a new flow (pinned here to the target id) and runs it from its start method."""
    target = string_arg(args, "targetRunId")
    outcome = kickoff(RefundFlow, {"id": target}, restore_from_state_id=string_arg(args, "sourceRunId"))
    if outcome["outcome"] in ("parked", "completed"):
        return {"outcome": "forked", "runId": target}
    return outcome


# Reading the store ------------------------------------------------------------------------------

def rows_of(conn: sqlite3.Connection, run_id: str) -> list:
    return conn.execute("SELECT id, method_name, timestamp, state_json FROM flow_states WHERE flow_uuid = ? ORDER BY id", (run_id,)).fetchall()


def count_claims(rows: list) -> int:
    """Rows of the approval method that resume() wrote: every approval row but those of a pause
    (save_pending_feedback writes the approval row right after the charge row)."""
    claims = 0
    for i, row in enumerate(rows):
        if row[1] == "approval" and not (i > 0 and rows[i - 1][1] == "charge"):
            claims += 1
    return claims


def read_store(run_id: str) -> dict:
    s = current()
    with sqlite3.connect(s.store_path, timeout=30) as conn:
        rows = rows_of(conn, run_id)
        pending_rows = conn.execute("SELECT context_json FROM pending_feedback WHERE flow_uuid = ?", (run_id,)).fetchall()
    if not rows and not pending_rows:
        return absent_view(run_id)
    # The append-only history (flow_states) is the record list. The pending_feedback row is a
    # marker CrewAI deletes by design when a resume consumes it: it is the run's status.
    records = [{"id": f"flow_states:{r[0]}", "hex": record_hex(r[1], r[2], r[3])} for r in rows]
    states = [state_of(json.loads(r[3])) for r in rows]
    head = states[-1] if states else None
    completed_nodes = [str(n) for n in ((head or {}).get("visited") or [])]
    normalized = [{"method": r[1], "state": state_of(json.loads(r[3]))} for r in rows]
    pending_method = json.loads(pending_rows[0][0]).get("method_name") if pending_rows else None
    if pending_method is not None:
        normalized.append({"pending": pending_method})
        status, next_action = "parked", f"AWAIT_RESUME {METHOD_NODES.get(pending_method, pending_method)}"
    elif rows and rows[-1][1] in TERMINAL_METHODS:
        status, next_action = "completed", "NONE"
    else:
        # kickoff(inputs={"id"}) is the only recovery: it runs the flow from its start method.
        status, next_action = "running", "RUN compute"
    try:
        loaded = s.persistence.load_state(run_id)
        if loaded is not None:
            FlowRefundState.model_validate(loaded)  # what kickoff's restore does with it
        pending = s.persistence.load_pending_feedback(run_id)
        recovered = {"state": loaded, "pending": pending[1].to_dict() if pending else None}
        recoveries = {"crewai": digest(json.loads(canonical(recovered)))}
    except Exception as e:
        # CrewAI's own restore fails on this state: recovery names no next action.
        status, next_action = "failed", "STUCK"
        recoveries = {"crewai": digest({"error": type(e).__name__})}
    return run_view(
        run_id=run_id, records=records, normalized=normalized, status=status, completed_nodes=completed_nodes,
        claims=count_claims(rows), states=states, head_state=head, next_action=next_action, recoveries=recoveries,
    )


# Probes -----------------------------------------------------------------------------------------

def probe_corruption(args: dict) -> dict:
    s = current()
    run_id = string_arg(args, "runId")
    pick = int(args.get("pick") or 0)
    copy_path = f"{s.store_path}.corrupt.db"
    Path(copy_path).unlink(missing_ok=True)
    with sqlite3.connect(s.store_path, timeout=30) as conn:
        conn.execute("VACUUM INTO ?", (copy_path,))
    try:
        with sqlite3.connect(copy_path) as copy:
            rows = rows_of(copy, run_id)
            if not rows:
                raise RuntimeError(f"flow {run_id} has no state to corrupt")
            target = rows[pick % len(rows)]
            text = bytearray(target[3].encode("utf-8"))
            key = b'"amountCents": '
            at = text.index(key) + len(key)
            while at + 1 < len(text) and 0x30 <= text[at + 1] <= 0x39:
                at += 1
            # One bit flipped in a stored value: the low bit of amountCents's last digit, so the
            # JSON stays well-formed (a store without record checksums cannot tell it from a value).
            text[at] ^= 0x01
            copy.execute("UPDATE flow_states SET state_json = ? WHERE id = ?", (text.decode("utf-8"), target[0]))
        reader = SQLiteFlowPersistence(copy_path)
        corrupted = f"flow_states:{target[0]}"
        try:
            for row in rows:  # every stored state, as CrewAI's restore would take it
                FlowRefundState.model_validate(json.loads(row[3]) if row[0] != target[0] else json.loads(text.decode("utf-8")))
            loaded = reader.load_state(run_id)
            if loaded is not None:
                FlowRefundState.model_validate(loaded)
        except Exception as e:
            return {"detected": True, "message": error_message(e), "corruptedRunId": run_id, "corruptedRecord": corrupted, "reportedRunId": None, "reportedRecord": None}
        return {"detected": False, "message": "the states loaded without an error", "corruptedRunId": run_id, "corruptedRecord": corrupted, "reportedRunId": None, "reportedRecord": None}
    finally:
        Path(copy_path).unlink(missing_ok=True)


def probe_invalid_state(args: dict) -> dict:
    run_id = string_arg(args, "runId")
    inp = RefundInput.model_validate(args.get("input"))
    outcome = kickoff(RefundFlow, {"id": run_id, **initial_state(inp)})
    return {"outcome": outcome, "view": read_store(run_id)}


def probe_definition_change(args: dict) -> dict:
    run_id = string_arg(args, "runId")
    inp = RefundInput.model_validate(args.get("input"))
    first = kickoff(RefundFlow, {"id": run_id, **initial_state(inp)})
    if first["outcome"] != "parked":
        raise RuntimeError(f"definition-change probe: side run {run_id} did not park ({first['outcome']})")
    # Version 2 renames the last method; the flow was parked under version 1.
    outcome = resume(run_id, {"approved": True, "note": "v2"}, flow_class=RefundFlowV2)
    return {"change": 'method "notify" renamed to "notify_customer"', "changedNode": "notify", "outcome": outcome}


op_probe = probe_dispatcher({
    "corruption": probe_corruption, "invalid-state": probe_invalid_state, "definition-change": probe_definition_change,
})


# Declarations -----------------------------------------------------------------------------------

def support_of(point: str) -> dict:
    place, kind, node = parse_point(point)
    when = "before" if place == "before-commit" else "after"
    if place == "inside-pure":
        return {"supported": True, "where": f"inside the {kind} method"}
    if place.startswith("in-handler"):
        return {"supported": True, "where": f"inside the {kind} method, around the sink call"}
    if kind == "RUN_STARTED":
        return {"supported": False, "reason": "CrewAI writes nothing when a flow starts: its first row is the state saved after the first method"}
    if kind == "EFFECT_INTENT":
        return {"supported": False, "reason": "CrewAI persists nothing before a method runs: there is no effect-intent record"}
    if kind in ("EFFECT_DONE", "NODE_COMPLETED") and node in ("charge", "notify"):
        return {"supported": True, "where": f"{when} save_state after the {node} method (CrewAI saves the state once per method: its result and its completion are one row)"}
    if kind == "NODE_COMPLETED" and node == "compute":
        return {"supported": True, "where": f"{when} save_state after the compute method"}
    if kind == "NODE_COMPLETED" and node == "approval":
        return {"supported": True, "where": f"{when} save_state after record_decision, the method that applies the human's answer"}
    if kind == "INTERRUPT_PARKED":
        return {"supported": True, "where": f"{when} save_pending_feedback (the state row and the pending_feedback row of the pause)"}
    if kind == "RESUME_CLAIMED":
        return {"supported": True, "where": f"{when} clear_pending_feedback, which consumes the pause during resume()"}
    if kind == "RUN_COMPLETED":
        return {"supported": False, "reason": "CrewAI writes no completion record: the row after the last method is the end"}
    if kind == "FORKED":
        return {"supported": False, "reason": "CrewAI writes no fork record: restore_from_state_id copies the source's latest state in memory and the fork's first row is written after its first method"}
    return {"supported": False, "reason": f"no CrewAI equivalent for {point}"}


def versions() -> dict:
    out = {}
    for p in PACKAGES:
        try:
            out[p] = importlib_metadata.version(p)
        except importlib_metadata.PackageNotFoundError:
            out[p] = "not installed"
    out["sqlite"] = sqlite3.sqlite_version
    return out


def op_hello(_args: dict) -> dict:
    supported = lambda where: {"supported": True, "where": where}  # noqa: E731
    return {
        "protocol": 1,
        "system": "crewai",
        "variant": "Flow with @persist (SQLiteFlowPersistence), @human_feedback with a provider that parks the flow",
        "versions": versions(),
        "points": {p: support_of(p) for p in FAULT_POINT_NAMES},
        "faultKinds": {
            "sigkill": supported("os.kill(os.getpid(), SIGKILL) at the point"),
            "throw": supported("an exception raised at the point"),
            "store-error": supported("sqlite3.OperationalError (disk I/O error) from the persistence before or after its write"),
        },
        "concurrency": {
            "in-process": supported("k threads, released together by a counted barrier, each calling Flow.from_pending(id).resume(feedback)"),
            "processes": supported("k processes, each with its own SQLiteFlowPersistence on the same file"),
            "hosts": {"supported": False, "reason": "the store is a SQLite file: it is shared through a file system, not reached over a network link"},
        },
        "fork": supported("kickoff(restore_from_state_id=source): hydrates the source's latest state (CrewAI cannot fork at an older state) into a new flow id and runs it from its start method"),
        "continueFrom": {"supported": False, "reason": "CrewAI restores only a flow's latest state (kickoff(inputs={id})); no API continues a flow from an older state"},
    }


def op_open(args: dict) -> dict:
    global session
    faults.arm(None)
    sinks.replace(string_arg(args, "sinkPath"))
    session = Session(string_arg(args, "storePath"))
    return {}


def main() -> None:
    serve({
        "hello": op_hello, "open": op_open, "arm": lambda a: faults.arm(a.get("fault")) or {},
        "start": op_start, "resume": lambda a: resume(string_arg(a, "runId"), a.get("value")),
        "resumeMany": op_resume_many, "continue": op_continue, "continueFrom": unsupported("CrewAI", "continueFrom"),
        "fork": op_fork, "readStore": lambda a: read_store(string_arg(a, "runId")), "probe": op_probe,
    })


if __name__ == "__main__":
    main()
