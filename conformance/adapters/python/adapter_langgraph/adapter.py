"""Conformance adapter for LangGraph (Python) with its SQLite checkpointer.

Run: <venv>/bin/python -m adapter_langgraph.adapter [--durability sync|default]
(PYTHONPATH=conformance/adapters/python; speaks JSON lines on stdio, conformance/README.md).

`--durability sync` passes durability="sync" to every invoke; `--durability default` passes
nothing, so LangGraph uses its default ("async": checkpoints are written in the background while
the next step runs). Persistence points are reached by wrapping SqliteSaver.put and put_writes;
the point a write corresponds to is read from what is being written (metadata.source, the
written channels, the last node in `visited`), never from timing.
"""

from remit_conformance import protocol  # first: takes stdout before any framework loads

import argparse
import shutil
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, Optional

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from remit_conformance.catalogue import EFFECT_NODES, FAULT_POINT_NAMES, parse_point
from remit_conformance.faults import INJECTED_STORE_ERROR, FaultSwitch
from remit_conformance.jsonable import jsonable
from remit_conformance.outcomes import outcome_of_error
from remit_conformance.protocol import probe_dispatcher, serve, string_arg
from remit_conformance.runview import (
    absent_view, canonical, completed, digest, parked, record_hex, run_view,
)
from remit_conformance.sink import SinkHolder
from remit_conformance.workflow import RefundInput, initial_state, state_of

from .graph import build_graph

NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
PACKAGES = ["langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite", "langchain-core", "pydantic"]

faults = FaultSwitch()
sinks = SinkHolder()
DURABILITY: Optional[str] = "sync"


def store_error() -> BaseException:
    return sqlite3.OperationalError(INJECTED_STORE_ERROR)


def last_visited(values: Any) -> Optional[str]:
    visited = values.get("visited") if isinstance(values, dict) else None
    return str(visited[-1]) if isinstance(visited, list) and visited else None


class FaultingSaver(SqliteSaver):
    """SqliteSaver with the catalogue's fault points around its two writes."""

    def put(self, config, checkpoint, metadata, new_versions):
        point = self._point_of_put(checkpoint, metadata)
        if point:
            faults.hit(f"before-commit:{point}", store_error)
        result = super().put(config, checkpoint, metadata, new_versions)
        if point:
            faults.hit(f"after-commit:{point}", store_error)
        return result

    def put_writes(self, config, writes, task_id, task_path=""):
        point = self._point_of_writes(writes, task_id)
        if point:
            faults.hit(f"before-commit:{point}", store_error)
        super().put_writes(config, writes, task_id, task_path)
        if point:
            faults.hit(f"after-commit:{point}", store_error)

    @staticmethod
    def _point_of_put(checkpoint, metadata) -> Optional[str]:
        source = (metadata or {}).get("source")
        if source == "input":
            return "RUN_STARTED"
        if source in ("update", "fork"):
            return "FORKED"
        if source != "loop":
            return None
        node = last_visited(checkpoint.get("channel_values"))
        return f"NODE_COMPLETED@{node}" if node else None

    @staticmethod
    def _point_of_writes(writes, task_id) -> Optional[str]:
        channels = [w[0] for w in writes]
        if "__interrupt__" in channels:
            return "INTERRUPT_PARKED@approval"
        if task_id == NULL_TASK_ID and "__resume__" in channels:
            return "RESUME_CLAIMED@approval"
        visited = next((w[1] for w in writes if w[0] == "visited"), None)
        node = str(visited[-1]) if isinstance(visited, list) and visited else None
        return f"EFFECT_DONE@{node}" if node in EFFECT_NODES else None


class Session:
    def __init__(self, store_path: str) -> None:
        self.store_path = store_path
        self.conn = sqlite3.connect(store_path, check_same_thread=False)
        self.saver = FaultingSaver(self.conn)
        self.saver.setup()
        self.app = build_graph(lambda: sinks.sink, faults, self.saver)

    def close(self) -> None:
        self.conn.close()


session: Optional[Session] = None


def current() -> Session:
    if session is None:
        raise RuntimeError('no store: "open" was not called')
    return session


# A fork is addressed as "<thread>@<checkpoint id of the fork>": it lives in its source's thread.
def thread_of(run_id: str) -> str:
    return run_id.split("@")[0]


def fork_checkpoint_of(run_id: str) -> Optional[str]:
    parts = run_id.split("@", 1)
    return parts[1] if len(parts) == 2 else None


def run_config(thread: str, checkpoint_id: Optional[str] = None) -> dict:
    configurable = {"thread_id": thread}
    if checkpoint_id is not None:
        # As the configs get_state_history returns (update_state needs the namespace).
        configurable.update({"checkpoint_ns": "", "checkpoint_id": checkpoint_id})
    return {"configurable": configurable}


def invoke_kwargs() -> dict:
    return {} if DURABILITY is None else {"durability": DURABILITY}


def outcome_of_result(result: Any) -> dict:
    values = result if isinstance(result, dict) else {}
    interrupted = bool(values.get("__interrupt__"))
    state = state_of(values)
    return parked(state) if interrupted else completed(state)


def invoke(app, value: Any, thread: str, checkpoint_id: Optional[str] = None) -> dict:
    try:
        return outcome_of_result(app.invoke(value, run_config(thread, checkpoint_id), **invoke_kwargs()))
    except Exception as e:
        return outcome_of_error(e)


# Reading the store ------------------------------------------------------------------------------

def rows_of(conn: sqlite3.Connection, thread: str) -> tuple[list[tuple], list[tuple]]:
    checkpoints = conn.execute(
        "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints "
        "WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id", (thread,)).fetchall()
    writes = conn.execute(
        "SELECT checkpoint_id, task_id, idx, channel, type, value FROM writes "
        "WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id, task_id, idx", (thread,)).fetchall()
    return checkpoints, writes


def branch_rows(conn: sqlite3.Connection, thread: str, fork_checkpoint: Optional[str]):
    """A whole thread, or for a fork the fork checkpoint and its descendants."""
    checkpoints, writes = rows_of(conn, thread)
    if fork_checkpoint is None:
        return checkpoints, writes
    keep = {fork_checkpoint}
    for row in checkpoints:
        if row[1] is not None and row[1] in keep:
            keep.add(row[0])
    return [r for r in checkpoints if r[0] in keep], [w for w in writes if w[0] in keep]


def decode(saver: SqliteSaver, type_: Optional[str], blob: Optional[bytes]) -> Any:
    if blob is None or type_ is None:
        return None
    return saver.serde.loads_typed((type_, blob))


def mask_interrupts(channel: str, value: Any) -> Any:
    if channel != "__interrupt__" or not isinstance(value, list):
        return value
    return [{**i, "id": "<id>"} if isinstance(i, dict) else i for i in value]


def normalize(saver, checkpoints, writes) -> list:
    """Decoded rows with checkpoint ids, task ids and timestamps masked, in branch order."""
    out = []
    for row in checkpoints:
        cp = decode(saver, row[2], row[3]) or {}
        md = sqlite_json(row[4])
        rows = [
            {"channel": w[3], "task": "null" if w[1] == NULL_TASK_ID else "task", "idx": w[2],
             "value": mask_interrupts(w[3], jsonable(decode(saver, w[4], w[5])))}
            for w in writes if w[0] == row[0]
        ]
        rows.sort(key=lambda r: canonical([r["task"], r["idx"], r["channel"]]))
        out.append({"source": md.get("source"), "values": state_of(jsonable(cp.get("channel_values", {}))), "writes": rows})
    return out


def sqlite_json(blob: Optional[bytes]) -> dict:
    import json
    if blob is None:
        return {}
    value = json.loads(bytes(blob).decode("utf-8"))
    return value if isinstance(value, dict) else {}


def states_of(saver, checkpoints) -> list:
    out = []
    for row in checkpoints:
        values = jsonable((decode(saver, row[2], row[3]) or {}).get("channel_values", {}))
        start = values.get("__start__") if isinstance(values, dict) else None
        out.append(state_of(start if isinstance(start, dict) else values))
    return out


def read_store(run_id: str) -> dict:
    s = current()
    thread = thread_of(run_id)
    fork_cp = fork_checkpoint_of(run_id)
    checkpoints, writes = branch_rows(s.conn, thread, fork_cp)
    if not checkpoints:
        return absent_view(run_id)
    records = [{"id": f"checkpoint:{r[0]}", "hex": record_hex(r[1], r[2], r[3], r[4])} for r in checkpoints]
    records += [{"id": f"write:{w[0]}:{w[1]}:{w[2]}", "hex": record_hex(w[3], w[4], w[5])} for w in writes]
    claims = sum(1 for w in writes if w[1] == NULL_TASK_ID and w[3] == "__resume__")
    normalized = normalize(s.saver, checkpoints, writes)
    states = states_of(s.saver, checkpoints)
    head_id = checkpoints[-1][0] if fork_cp is not None else None
    try:
        snap = s.app.get_state(run_config(thread, head_id))
    except Exception as e:
        # LangGraph's own reading of the thread fails (e.g. a stored state fails the state model):
        # recovery names no next action. The head is the last stored checkpoint as written.
        head = states[-1] if states else None
        return run_view(
            run_id=run_id, records=records, normalized=normalized, status="failed",
            completed_nodes=list((head or {}).get("visited") or []), claims=claims, states=states,
            head_state=head, next_action="STUCK",
            recoveries={"langgraph": digest({"error": type(e).__name__})},
        )
    values = jsonable(snap.values) if isinstance(snap.values, dict) else {}
    completed_nodes = [str(n) for n in values.get("visited") or []]
    interrupted = any(getattr(t, "interrupts", None) for t in snap.tasks)
    pending_done = [t.name for t in snap.tasks if getattr(t, "result", None) is not None and t.name in EFFECT_NODES]
    nxt = list(snap.next)
    status = "completed" if not nxt else ("parked" if interrupted else "running")
    next_action = "NONE" if not nxt else f"{'AWAIT_RESUME' if interrupted else 'RUN'} {','.join(nxt)}"
    recovered = {
        "values": state_of(values), "next": nxt,
        "tasks": [[t.name, [jsonable(i.value) for i in (t.interrupts or ())]] for t in snap.tasks],
    }
    effects = list(dict.fromkeys([n for n in completed_nodes if n in EFFECT_NODES] + pending_done))
    return run_view(
        run_id=run_id, records=records, normalized=normalized, status=status,
        completed_nodes=completed_nodes, claims=claims, states=states, head_state=state_of(values),
        next_action=next_action, recoveries={"langgraph": digest(recovered)}, effects=effects,
    )


def checkpoint_after(thread: str, after: str) -> str:
    """The oldest loop checkpoint of the thread whose last completed node is `after`."""
    s = current()
    for row in rows_of(s.conn, thread)[0]:
        md = sqlite_json(row[4])
        cp = decode(s.saver, row[2], row[3]) or {}
        if md.get("source") == "loop" and last_visited(jsonable(cp.get("channel_values", {}))) == after:
            return row[0]
    raise RuntimeError(f"thread {thread} has no checkpoint after node {after}")


# Operations -------------------------------------------------------------------------------------

def op_open(args: dict) -> dict:
    global session
    faults.arm(None)
    if session is not None:
        session.close()
    sinks.replace(string_arg(args, "sinkPath"))
    session = Session(string_arg(args, "storePath"))
    return {}


def op_start(args: dict) -> dict:
    inp = RefundInput.model_validate(args.get("input"))
    return invoke(current().app, initial_state(inp), string_arg(args, "runId"))


def op_resume(args: dict) -> dict:
    return invoke(current().app, Command(resume=args.get("value")), thread_of(string_arg(args, "runId")))


def op_resume_many(args: dict) -> dict:
    thread = thread_of(string_arg(args, "runId"))
    values = args.get("values") if isinstance(args.get("values"), list) else []
    app = current().app
    # A counted barrier: every thread is started and waiting before any of them resumes.
    barrier = threading.Barrier(len(values)) if values else None

    def one(value: Any) -> dict:
        barrier.wait()
        return invoke(app, Command(resume=value), thread)

    with ThreadPoolExecutor(max_workers=max(1, len(values))) as pool:
        return {"outcomes": list(pool.map(one, values))}


def op_continue(args: dict) -> dict:
    return invoke(current().app, None, thread_of(string_arg(args, "runId")))


def op_continue_from(args: dict) -> dict:
    thread = thread_of(string_arg(args, "runId"))
    return invoke(current().app, None, thread, checkpoint_after(thread, string_arg(args, "after")))


def op_fork(args: dict) -> dict:
    s = current()
    thread = thread_of(string_arg(args, "sourceRunId"))
    after = string_arg(args, "after")
    older = checkpoint_after(thread, after)
    try:
        # LangGraph's fork: update_state on an older checkpoint writes a new checkpoint whose
        # parent is that one, in the same thread; invoking from it continues the fork.
        forked = s.app.update_state(run_config(thread, older), {}, as_node=after)
    except Exception as e:
        return outcome_of_error(e)
    return {"outcome": "forked", "runId": f"{thread}@{forked['configurable']['checkpoint_id']}"}


def op_read_store(args: dict) -> dict:
    return read_store(string_arg(args, "runId"))


def probe_corruption(args: dict) -> dict:
    s = current()
    thread = thread_of(string_arg(args, "runId"))
    pick = int(args.get("pick") or 0)
    copy_path = f"{s.store_path}.corrupt.db"
    Path(copy_path).unlink(missing_ok=True)
    s.conn.execute("VACUUM INTO ?", (copy_path,))
    copy = sqlite3.connect(copy_path, check_same_thread=False)
    try:
        key = b"amountCents"
        candidates = [r for r in rows_of(copy, thread)[0] if r[3] is not None and key in bytes(r[3])]
        if not candidates:
            raise RuntimeError(f"thread {thread} has no checkpoint to corrupt")
        target = candidates[pick % len(candidates)]
        blob = bytearray(target[3])
        # One bit flipped in a stored value: the low bit of the last byte of amountCents's msgpack
        # integer. The blob stays well-formed msgpack; only the number changes.
        at = blob.index(key) + len(key)
        marker = blob[at]
        width = {0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8, 0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8}.get(marker, 0)
        blob[at + width] ^= 0x01
        copy.execute("UPDATE checkpoints SET checkpoint = ? WHERE thread_id = ? AND checkpoint_id = ?", (bytes(blob), thread, target[0]))
        copy.commit()
        reader = build_graph(lambda: sinks.sink, FaultSwitch(), SqliteSaver(copy))
        corrupted_record = f"checkpoint:{target[0]}"
        try:
            for _ in reader.get_state_history(run_config(thread)):
                pass
            reader.get_state(run_config(thread))
        except Exception as e:
            return {"detected": True, "message": protocol.error_message(e), "corruptedRunId": thread,
                    "corruptedRecord": corrupted_record, "reportedRunId": None, "reportedRecord": None}
        return {"detected": False, "message": "history and state loaded without an error", "corruptedRunId": thread,
                "corruptedRecord": corrupted_record, "reportedRunId": None, "reportedRecord": None}
    finally:
        copy.close()
        Path(copy_path).unlink(missing_ok=True)


def probe_invalid_state(args: dict) -> dict:
    run_id = string_arg(args, "runId")
    inp = RefundInput.model_validate(args.get("input"))
    outcome = invoke(current().app, initial_state(inp), run_id)
    return {"outcome": outcome, "view": read_store(run_id)}


def probe_definition_change(args: dict) -> dict:
    s = current()
    run_id = string_arg(args, "runId")
    inp = RefundInput.model_validate(args.get("input"))
    first = invoke(s.app, initial_state(inp), run_id)
    if first["outcome"] != "parked":
        raise RuntimeError(f"definition-change probe: side run {run_id} did not park ({first['outcome']})")
    # Version 2 of the workflow renames its last node; the parked run was started under version 1.
    changed = build_graph(lambda: sinks.sink, FaultSwitch(), s.saver, notify_node="notify_customer")
    outcome = invoke(changed, Command(resume={"approved": True, "note": "v2"}), run_id)
    return {"change": 'node "notify" renamed to "notify_customer"', "changedNode": "notify", "outcome": outcome}


op_probe = probe_dispatcher({
    "corruption": probe_corruption, "invalid-state": probe_invalid_state, "definition-change": probe_definition_change,
})


def support_of(point: str) -> dict:
    place, kind, node = parse_point(point)
    when = "before" if place == "before-commit" else "after"
    if place == "inside-pure":
        return {"supported": True, "where": f"inside the {kind} node's body"}
    if place.startswith("in-handler"):
        return {"supported": True, "where": f"inside the {kind} node, around the sink call"}
    if kind == "RUN_STARTED":
        return {"supported": True, "where": f'{when} SqliteSaver.put of the input checkpoint (metadata source "input")'}
    if kind == "NODE_COMPLETED":
        return {"supported": True, "where": f'{when} SqliteSaver.put of the checkpoint after {node} (metadata source "loop")'}
    if kind == "EFFECT_INTENT":
        return {"supported": False, "reason": "LangGraph persists nothing before a node runs: there is no effect-intent record"}
    if kind == "EFFECT_DONE":
        return {"supported": True, "where": f"{when} SqliteSaver.put_writes of the {node} task's writes (its result, saved before the step's checkpoint)"}
    if kind == "INTERRUPT_PARKED":
        return {"supported": True, "where": f"{when} SqliteSaver.put_writes of the __interrupt__ write"}
    if kind == "RESUME_CLAIMED":
        return {"supported": True, "where": f"{when} SqliteSaver.put_writes of the __resume__ write that Command(resume=...) makes"}
    if kind == "RUN_COMPLETED":
        return {"supported": False, "reason": "LangGraph writes no completion record: the checkpoint after the last node is the end"}
    if kind == "FORKED":
        return {"supported": True, "where": f'{when} SqliteSaver.put of the checkpoint update_state writes on the older checkpoint (metadata source "update")'}
    return {"supported": False, "reason": f"no LangGraph equivalent for {point}"}


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
    durability = f'durability="{DURABILITY}"' if DURABILITY else 'the default durability ("async")'
    return {
        "protocol": 1,
        "system": "langgraph-py" if DURABILITY == "sync" else "langgraph-py-default-durability",
        "variant": f"sqlite, {durability}",
        "versions": versions(),
        "points": {p: support_of(p) for p in FAULT_POINT_NAMES},
        "faultKinds": {
            "sigkill": supported("os.kill(os.getpid(), SIGKILL) at the point"),
            "throw": supported("an exception raised at the point"),
            "store-error": supported("sqlite3.OperationalError (disk I/O error) from the checkpointer before or after its write"),
        },
        "concurrency": {
            "in-process": supported("k threads, released together by a counted barrier, each calling invoke(Command(resume=...)) on one compiled graph"),
            "processes": supported("k processes, each with its own SqliteSaver on the same file"),
            "hosts": {"supported": False, "reason": "the store is a SQLite file: it is shared through a file system, not reached over a network link"},
        },
        "fork": supported("update_state on an older checkpoint (time travel); the fork lives in the same thread"),
        "continueFrom": supported("invoke(None, {thread_id, checkpoint_id}) on an older checkpoint"),
    }


def on_exit() -> None:
    if session is not None:
        session.close()


def main() -> None:
    global DURABILITY
    parser = argparse.ArgumentParser()
    parser.add_argument("--durability", choices=["sync", "default"], default="sync")
    DURABILITY = "sync" if parser.parse_args().durability == "sync" else None
    serve({
        "hello": op_hello, "open": op_open, "arm": lambda a: faults.arm(a.get("fault")) or {},
        "start": op_start, "resume": op_resume, "resumeMany": op_resume_many, "continue": op_continue,
        "continueFrom": op_continue_from, "fork": op_fork, "readStore": op_read_store, "probe": op_probe,
    }, on_exit)


if __name__ == "__main__":
    main()
