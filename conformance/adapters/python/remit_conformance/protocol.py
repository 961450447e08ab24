"""The adapter side of the JSON-lines protocol (conformance/README.md, "The adapter protocol").

Importing this module takes stdout for protocol lines only: it keeps a duplicate of file
descriptor 1 for replies and fault events, then points descriptor 1 and sys.stdout at stderr, so
whatever a framework prints (CrewAI's panels, warnings) cannot corrupt the protocol. Import it
before any framework.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import traceback
from typing import Any, Callable, Optional

_PROTOCOL_FD = os.dup(1)
os.dup2(2, 1)
sys.stdout = sys.stderr
_write_lock = threading.Lock()


def _write_line(value: Any) -> None:
    data = (json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
    with _write_lock:
        view = memoryview(data)
        while view:
            written = os.write(_PROTOCOL_FD, view)
            view = view[written:]


def write_event(value: dict) -> None:
    """An unprompted event line (a fault), written synchronously: out before a SIGKILL that follows."""
    _write_line(value)


Handler = Callable[[dict], Any]


def string_arg(args: dict, name: str) -> str:
    v = args.get(name)
    if not isinstance(v, str) or not v:
        raise TypeError(f'request field "{name}" must be a non-empty string')
    return v


def probe_dispatcher(probes: dict[str, Handler]) -> Handler:
    """The `probe` request's handler: runs the probe its `kind` names; an unknown kind is an error."""

    def op_probe(args: dict) -> Any:
        kind = args.get("kind")
        probe = probes.get(kind) if isinstance(kind, str) else None
        if probe is None:
            raise ValueError(f'unknown probe kind "{kind}"')
        return probe(args)

    return op_probe


def unsupported(system: str, op: str) -> Handler:
    """The handler of an operation `system` lacks (and declares so in its hello reply)."""

    def handler(_args: dict) -> Any:
        raise RuntimeError(f"{op}: {system} has no such operation (declared in hello)")

    return handler


def error_message(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def serve(handlers: dict[str, Handler], on_exit: Optional[Callable[[], None]] = None) -> None:
    """Serve requests one at a time, in arrival order, until `shutdown` or end of input."""

    def finish() -> None:
        if on_exit is not None:
            try:
                on_exit()
            except Exception as e:  # clean-up must not turn a shutdown into a crash
                print(f"clean-up at exit failed: {error_message(e)}", file=sys.stderr)
        sys.stderr.flush()
        # Frameworks leave non-daemon threads behind (event buses, executors); a normal exit would
        # wait for them. Replies are already written, with no buffering in between.
        os._exit(0)

    stdin = sys.stdin.buffer
    while True:
        raw = stdin.readline()
        if not raw:
            finish()
        line = raw.decode("utf-8").strip()
        if not line:
            continue
        try:
            request = json.loads(line)
        except ValueError:
            _write_line({"id": -1, "ok": False, "error": {"message": "request is not JSON"}})
            continue
        rid = request.get("id") if isinstance(request.get("id"), int) else -1
        op = request.get("op") if isinstance(request.get("op"), str) else ""
        if op == "shutdown":
            _write_line({"id": rid, "ok": True, "result": {}})
            finish()
        handler = handlers.get(op)
        if handler is None:
            _write_line({"id": rid, "ok": False, "error": {"message": f'unknown op "{op}"'}})
            continue
        try:
            result = handler(request)
        except Exception as e:
            traceback.print_exc(file=sys.stderr)
            _write_line({"id": rid, "ok": False, "error": {"message": error_message(e)}})
            continue
        _write_line({"id": rid, "ok": True, "result": {} if result is None else result})
