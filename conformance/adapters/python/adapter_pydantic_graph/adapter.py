"""Conformance adapter for pydantic-graph 1.x with FileStatePersistence (one JSON file per run).

Run: <venv>/bin/python -m adapter_pydantic_graph.adapter
(PYTHONPATH=conformance/adapters/python; speaks JSON lines on stdio, conformance/README.md).

Persistence points are reached by wrapping the file persistence's writes (_save_sync, the one
place every write goes through, inside the persistence's own file lock); which catalogue record a
write is comes from the persistence call that makes it (snapshot_node after a node, the status
writes of record_run, load_next's claim), never from timing.
"""

from remit_conformance import protocol  # first: takes stdout before any framework loads

import asyncio
import errno
import json
import shutil
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, Optional

from pydantic_graph import End
from pydantic_graph.persistence import EndSnapshot, NodeSnapshot
from pydantic_graph.persistence.file import FileStatePersistence

from remit_conformance.catalogue import EFFECT_NODES, FAULT_POINT_NAMES, parse_point
from remit_conformance.faults import INJECTED_STORE_ERROR, FaultSwitch
from remit_conformance.jsonable import jsonable
from remit_conformance.outcomes import outcome_of_error
from remit_conformance.protocol import error_message, probe_dispatcher, serve, string_arg, unsupported
from remit_conformance.runview import absent_view, canonical, completed, digest, parked, record_hex, refused, run_view
from remit_conformance.sink import SinkHolder
from remit_conformance.workflow import RefundInput, RefundState, initial_state, state_of

from .graph import NODE_NAMES, Approval, Compute, Deps, build_graph

PACKAGES = ["pydantic-graph", "pydantic"]
faults = FaultSwitch()
sinks = SinkHolder()


def store_error() -> BaseException:
    return OSError(errno.EIO, INJECTED_STORE_ERROR)


def node_name(snapshot_id: str) -> Optional[str]:
    return NODE_NAMES.get(snapshot_id.split(":", 1)[0])


@dataclass
class FaultingFilePersistence(FileStatePersistence):
    """FileStatePersistence with the catalogue's points around each write it makes."""

    _points: list = field(default_factory=list, init=False, repr=False)
    _last_run: Optional[str] = field(default=None, init=False, repr=False)
    _claiming: bool = field(default=False, init=False, repr=False)

    def _save_sync(self, snapshots) -> None:
        points, self._points = self._points, []
        if self._claiming:
            points = points + self._claim_points(snapshots)
        faults.hit_all([f"before-commit:{p}" for p in points], store_error)
        super()._save_sync(snapshots)
        faults.hit_all([f"after-commit:{p}" for p in points], store_error)

    def _claim_points(self, snapshots) -> list:
        """load_next marks the first created snapshot pending: if that is the approval, the write
        is the resume claim."""
        before = {s.id: s.status for s in self._load_sync() if isinstance(s, NodeSnapshot)}
        for s in snapshots:
            if isinstance(s, NodeSnapshot) and s.status == "pending" and before.get(s.id) == "created":
                return ["RESUME_CLAIMED@approval"] if isinstance(s.node, Approval) else []
        return []

    async def snapshot_node_if_new(self, snapshot_id, state, next_node) -> None:
        self._points = ["RUN_STARTED"] if isinstance(next_node, Compute) else []
        try:
            await super().snapshot_node_if_new(snapshot_id, state, next_node)
        finally:
            self._points = []

    async def snapshot_node(self, state, next_node) -> None:
        points = [f"NODE_COMPLETED@{self._last_run}"] if self._last_run else []
        if isinstance(next_node, Approval):
            points.append("INTERRUPT_PARKED@approval")
        self._points = points
        try:
            await super().snapshot_node(state, next_node)
        finally:
            self._points = []

    async def snapshot_end(self, state, end) -> None:
        self._points = ["NODE_COMPLETED@notify", "RUN_COMPLETED"]
        try:
            await super().snapshot_end(state, end)
        finally:
            self._points = []

    def record_run(self, snapshot_id):
        node = node_name(snapshot_id)
        self._last_run = node
        self._points = [f"EFFECT_INTENT@{node}"] if node in EFFECT_NODES else []
        return super().record_run(snapshot_id)

    def _after_run_sync(self, snapshot_id, duration, status) -> None:
        node = node_name(snapshot_id)
        self._points = [f"EFFECT_DONE@{node}"] if node in EFFECT_NODES and status == "success" else []
        super()._after_run_sync(snapshot_id, duration, status)

    async def load_next(self):
        self._claiming = True
        try:
            return await super().load_next()
        finally:
            self._claiming = False


class Store:
    def __init__(self, store_path: str) -> None:
        self.dir = Path(f"{store_path}.runs")
        self.dir.mkdir(parents=True, exist_ok=True)

    def file_of(self, run_id: str) -> Path:
        if "/" in run_id or run_id.startswith("."):
            raise ValueError(f"run id {run_id!r} cannot name a file")
        return self.dir / f"{run_id}.json"

    def persistence(self, run_id: str, version: int = 1) -> FaultingFilePersistence:
        p = FaultingFilePersistence(self.file_of(run_id))
        p.set_graph_types(build_graph(version)[0])
        return p


store: Optional[Store] = None


def current() -> Store:
    if store is None:
        raise RuntimeError('no store: "open" was not called')
    return store


def deps(run_id: str) -> Deps:
    return Deps(sink=lambda: sinks.sink, faults=faults, run_id=run_id)


async def drive(run) -> dict:
    """Iterate until the end, or until the node that needs a human (the documented pattern)."""
    node = run.next_node
    while True:
        node = await run.next(node)
        if isinstance(node, End):
            return completed(state_of(run.state))
        if isinstance(node, Approval):
            return parked(state_of(run.state))


def first_created(snapshots) -> Optional[NodeSnapshot]:
    return next((s for s in snapshots if isinstance(s, NodeSnapshot) and s.status == "created"), None)


async def start(run_id: str, inp: RefundInput) -> dict:
    graph, _ = build_graph()
    p = current().persistence(run_id)
    try:
        async with graph.iter(Compute(), state=RefundState.model_validate(initial_state(inp)), deps=deps(run_id), persistence=p) as run:
            return await drive(run)
    except Exception as e:
        return outcome_of_error(e)


async def resume(run_id: str, value: Any, version: int = 1) -> dict:
    """The documented pattern: take the pending snapshot with load_next() (under the persistence's
    lock) and continue with a node that carries the answer."""
    graph, decide = build_graph(version)
    p = current().persistence(run_id, version)
    try:
        snapshot = await p.load_next()
        if snapshot is None:
            return refused("NOT_PARKED", f"run {run_id} has no snapshot waiting to run (load_next returned none)")
        if not isinstance(snapshot.node, Approval):
            return refused("NOT_PARKED", f"run {run_id} is not waiting for an approval: load_next handed out {snapshot.node.get_node_id()}")
        async with graph.iter(decide(answer=value), state=snapshot.state, deps=deps(run_id), persistence=p) as run:
            return await drive(run)
    except Exception as e:
        return outcome_of_error(e)


async def continue_run(run_id: str) -> dict:
    graph, _ = build_graph()
    p = current().persistence(run_id)
    try:
        snapshots = await p.load_all()
        end = next((s for s in snapshots if isinstance(s, EndSnapshot)), None)
        if end is not None:
            return completed(state_of(end.state))
        waiting = first_created(snapshots)
        if waiting is not None and isinstance(waiting.node, Approval):
            return parked(state_of(waiting.state))
        # The documented recovery: continue from the next snapshot persistence hands out.
        async with graph.iter_from_persistence(p, deps=deps(run_id)) as run:
            return await drive(run)
    except Exception as e:
        return outcome_of_error(e)


async def resume_many(run_id: str, values: list) -> dict:
    barrier = asyncio.Barrier(len(values)) if values else None

    async def one(value: Any) -> dict:
        await barrier.wait()
        return await resume(run_id, value)

    return {"outcomes": list(await asyncio.gather(*(one(v) for v in values)))}


# Reading the store ------------------------------------------------------------------------------

MUTABLE_FIELDS = ("status", "start_ts", "duration")


def raw_snapshots(path: Path) -> Optional[list]:
    if not path.exists():
        return None
    data = json.loads(path.read_bytes())
    if not isinstance(data, list):
        raise ValueError(f"{path.name}: not a list of snapshots")
    return data


def immutable(snapshot: dict) -> dict:
    """A snapshot without the fields pydantic-graph updates in place by design (status, start
    time, duration): what a snapshot records cannot change; its execution status is reported as
    the run's status instead."""
    return {k: v for k, v in snapshot.items() if k not in MUTABLE_FIELDS}


def masked(snapshot: dict) -> dict:
    out = {k: v for k, v in immutable(snapshot).items() if k not in ("id", "ts")}
    node = out.get("node") or out.get("result")
    if isinstance(node, dict):
        out["node"] = {k: v for k, v in node.items() if k != "snapshot_id"}
    out["status"] = snapshot.get("status")
    return out


def read_store(run_id: str) -> dict:
    s = current()
    raw = raw_snapshots(s.file_of(run_id))
    if raw is None:
        return absent_view(run_id)
    if not raw:
        return run_view(run_id=run_id, records=[], normalized=[], status="empty", completed_nodes=[], claims=0,
                        states=[], head_state=None, next_action="STUCK", recoveries={})
    records = [{"id": f"snapshot:{r.get('id')}", "hex": record_hex(canonical(immutable(r)))} for r in raw]
    states = [state_of(r.get("state")) for r in raw]
    head = states[-1]
    completed_nodes = [str(n) for n in (head.get("visited") or [])]
    claims = sum(1 for r in raw if str(r.get("id", "")).startswith("Decide:"))
    normalized = [masked(r) for r in raw]
    try:
        # pydantic-graph's own reading of the run (validates every snapshot).
        snapshots = asyncio.run(s.persistence(run_id).load_all())
    except Exception as e:
        return run_view(run_id=run_id, records=records, normalized=normalized, status="failed",
                        completed_nodes=completed_nodes, claims=claims, states=states, head_state=head,
                        next_action="STUCK", recoveries={"pydantic-graph": digest({"error": type(e).__name__})})
    end = next((x for x in snapshots if isinstance(x, EndSnapshot)), None)
    waiting = first_created(snapshots)
    if end is not None:
        status, next_action = "completed", "NONE"
    elif waiting is not None and isinstance(waiting.node, Approval):
        status, next_action = "parked", "AWAIT_RESUME approval"
    elif waiting is not None:
        status, next_action = "running", f"RUN {NODE_NAMES.get(waiting.node.get_node_id(), waiting.node.get_node_id())}"
    else:
        # iter_from_persistence would fail: "Unable to restore snapshot from state persistence."
        errored = any(isinstance(x, NodeSnapshot) and x.status == "error" for x in snapshots)
        status, next_action = ("failed" if errored else "running"), "STUCK"
    recovered = [[type(x).__name__, x.node.get_node_id() if isinstance(x, NodeSnapshot) else "End",
                  getattr(x, "status", "end"), state_of(x.state)] for x in snapshots]
    return run_view(run_id=run_id, records=records, normalized=normalized, status=status,
                    completed_nodes=completed_nodes, claims=claims, states=states, head_state=head,
                    next_action=next_action, recoveries={"pydantic-graph": digest(recovered)})


# Probes -----------------------------------------------------------------------------------------

def probe_corruption(args: dict) -> dict:
    s = current()
    run_id = string_arg(args, "runId")
    pick = int(args.get("pick") or 0)
    source = s.file_of(run_id)
    copy_id = f"{run_id}-corrupt"
    copy = s.file_of(copy_id)
    text = bytearray(source.read_bytes())
    key = b'"amountCents":'
    starts = []
    at = text.find(key)
    while at >= 0:
        starts.append(at)
        at = text.find(key, at + 1)
    if not starts:
        raise RuntimeError(f"run {run_id} has no snapshot to corrupt")
    index = pick % len(starts)
    # One bit flipped in a stored value: the low bit of amountCents's last digit, so the JSON
    # stays well-formed (the case a store without record checksums cannot tell from a real value).
    pos = starts[index] + len(key)
    while text[pos] in b" ":
        pos += 1
    while pos + 1 < len(text) and 0x30 <= text[pos + 1] <= 0x39:
        pos += 1
    text[pos] ^= 0x01
    copy.write_bytes(bytes(text))
    snapshots = json.loads(source.read_bytes())
    corrupted_record = f"snapshot:{snapshots[min(index, len(snapshots) - 1)].get('id')}"
    try:
        asyncio.run(s.persistence(copy_id).load_all())
        return {"detected": False, "message": "the snapshots loaded without an error", "corruptedRunId": run_id,
                "corruptedRecord": corrupted_record, "reportedRunId": None, "reportedRecord": None}
    except Exception as e:
        return {"detected": True, "message": error_message(e), "corruptedRunId": run_id,
                "corruptedRecord": corrupted_record, "reportedRunId": None, "reportedRecord": None}
    finally:
        copy.unlink(missing_ok=True)


def probe_invalid_state(args: dict) -> dict:
    run_id = string_arg(args, "runId")
    outcome = asyncio.run(start(run_id, RefundInput.model_validate(args.get("input"))))
    return {"outcome": outcome, "view": read_store(run_id)}


def probe_definition_change(args: dict) -> dict:
    run_id = string_arg(args, "runId")
    first = asyncio.run(start(run_id, RefundInput.model_validate(args.get("input"))))
    if first["outcome"] != "parked":
        raise RuntimeError(f"definition-change probe: side run {run_id} did not park ({first['outcome']})")
    # Version 2 renames the last node (Notify -> NotifyCustomer); the run was parked under version 1.
    outcome = asyncio.run(resume(run_id, {"approved": True, "note": "v2"}, version=2))
    return {"change": 'node "Notify" renamed to "NotifyCustomer"', "changedNode": "notify", "outcome": outcome}


op_probe = probe_dispatcher({
    "corruption": probe_corruption, "invalid-state": probe_invalid_state, "definition-change": probe_definition_change,
})


# Declarations -----------------------------------------------------------------------------------

def support_of(point: str) -> dict:
    place, kind, node = parse_point(point)
    when = "before" if place == "before-commit" else "after"
    lock = "inside the persistence's file lock"
    if place == "inside-pure":
        return {"supported": True, "where": f"inside the {kind} node's run()"}
    if place.startswith("in-handler"):
        return {"supported": True, "where": f"inside the {kind} node's run(), around the sink call"}
    if kind == "RUN_STARTED":
        return {"supported": True, "where": f"{when} the write of the first node snapshot (Compute, status created), {lock}"}
    if kind == "NODE_COMPLETED" and node == "notify":
        return {"supported": True, "where": f"{when} the write of the end snapshot (snapshot_end after Notify; the same write as RUN_COMPLETED), {lock}"}
    if kind == "NODE_COMPLETED":
        also = " (the same write as INTERRUPT_PARKED)" if node == "charge" else ""
        return {"supported": True, "where": f"{when} the write of the snapshot snapshot_node makes after {node} ran: its state and the next node{also}, {lock}"}
    if kind == "EFFECT_INTENT":
        return {"supported": True, "where": f"{when} record_run's write of status 'running' on the {node} snapshot, {lock}"}
    if kind == "EFFECT_DONE":
        return {"supported": True, "where": f"{when} record_run's write of status 'success' on the {node} snapshot, {lock}"}
    if kind == "INTERRUPT_PARKED":
        return {"supported": True, "where": f"{when} the write of the Approval node snapshot (status created) after charge, {lock}"}
    if kind == "RESUME_CLAIMED":
        return {"supported": True, "where": f"{when} load_next's write of status 'pending' on the Approval snapshot, {lock}"}
    if kind == "RUN_COMPLETED":
        return {"supported": True, "where": f"{when} the write of the end snapshot (snapshot_end), {lock}"}
    if kind == "FORKED":
        return {"supported": False, "reason": "pydantic-graph has no fork: a run's snapshots live in its own file and no API starts a new run from one of them"}
    return {"supported": False, "reason": f"no pydantic-graph equivalent for {point}"}


def versions() -> dict:
    out = {}
    for p in PACKAGES:
        try:
            out[p] = importlib_metadata.version(p)
        except importlib_metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out


def op_hello(_args: dict) -> dict:
    supported = lambda where: {"supported": True, "where": where}  # noqa: E731
    return {
        "protocol": 1,
        "system": "pydantic-graph",
        "variant": "FileStatePersistence, human-in-the-loop by stopping at the Approval node",
        "versions": versions(),
        "points": {p: support_of(p) for p in FAULT_POINT_NAMES},
        "faultKinds": {
            "sigkill": supported("os.kill(os.getpid(), SIGKILL) at the point"),
            "throw": supported("an exception raised at the point"),
            "store-error": supported("OSError(EIO) from the persistence's file write, before or after it"),
        },
        "concurrency": {
            "in-process": supported("k asyncio tasks, released together by a counted barrier, each resuming with its own FileStatePersistence on the run's file"),
            "processes": supported("k processes, each with its own FileStatePersistence on the run's file"),
            "hosts": {"supported": False, "reason": "the store is a JSON file per run guarded by a lock file: it is shared through a file system, not reached over a network link"},
        },
        "fork": {"supported": False, "reason": "pydantic-graph 1.x has no fork: no API starts a new run from another run's snapshot"},
        "continueFrom": {"supported": False, "reason": "pydantic-graph hands out only the next created snapshot (load_next); no API continues a run from an older snapshot"},
    }


def op_open(args: dict) -> dict:
    global store
    faults.arm(None)
    sinks.replace(string_arg(args, "sinkPath"))
    store = Store(string_arg(args, "storePath"))
    return {}


def main() -> None:
    serve({
        "hello": op_hello,
        "open": op_open,
        "arm": lambda a: faults.arm(a.get("fault")) or {},
        "start": lambda a: asyncio.run(start(string_arg(a, "runId"), RefundInput.model_validate(a.get("input")))),
        "resume": lambda a: asyncio.run(resume(string_arg(a, "runId"), a.get("value"))),
        "resumeMany": lambda a: asyncio.run(resume_many(string_arg(a, "runId"), a.get("values") if isinstance(a.get("values"), list) else [])),
        "continue": lambda a: asyncio.run(continue_run(string_arg(a, "runId"))),
        "continueFrom": unsupported("pydantic-graph", "continueFrom"),
        "fork": unsupported("pydantic-graph", "fork"),
        "readStore": lambda a: read_store(string_arg(a, "runId")),
        "probe": op_probe,
    })


if __name__ == "__main__":
    main()
