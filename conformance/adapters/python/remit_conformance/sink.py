"""The effect sink writer: the same lines as conformance/harness/sink.ts (O_APPEND, one write per
line, fsync after each), so counts survive SIGKILL of the writer and lines never interleave."""

from __future__ import annotations

import json
import os
import threading
from typing import Optional


class EffectSink:
    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._lock = threading.Lock()

    def invoke(self, node: str, key: str, run: str) -> None:
        self._write({"t": "invoke", "node": node, "key": key, "run": run, "pid": os.getpid()})

    def apply(self, node: str, key: str, run: str) -> None:
        self._write({"t": "apply", "node": node, "key": key, "run": run, "pid": os.getpid()})

    def pure(self, node: str, run: str) -> None:
        self._write({"t": "pure", "node": node, "run": run, "pid": os.getpid()})

    def close(self) -> None:
        os.close(self._fd)

    def _write(self, line: dict) -> None:
        data = (json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            written = os.write(self._fd, data)
            if written != len(data):
                raise OSError(f"effect sink {self.path}: short write ({written} of {len(data)} bytes)")
            os.fsync(self._fd)


class SinkHolder:
    """The sink of the currently open cell; `open` replaces it."""

    def __init__(self) -> None:
        self._sink: Optional[EffectSink] = None

    def replace(self, path: str) -> None:
        if self._sink is not None:
            self._sink.close()
        self._sink = EffectSink(path)

    @property
    def sink(self) -> EffectSink:
        if self._sink is None:
            raise RuntimeError('no effect sink: "open" was not called')
        return self._sink
