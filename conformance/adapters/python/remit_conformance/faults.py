"""The fault switch: fires an armed fault once, at the named point's next occurrence."""

from __future__ import annotations

import os
import signal
import threading
from typing import Callable, Optional

from .protocol import write_event


class InjectedFault(Exception):
    """What a `throw` fault raises; adapters report it as error.kind = "injected"."""

    def __init__(self, point: str) -> None:
        super().__init__(f"injected fault at {point}")
        self.point = point


#: Marker in the message of every injected store error, so the adapter can tell it from others
#: after a framework wrapped it (CrewAI re-raises persistence errors as RuntimeError).
INJECTED_STORE_ERROR = "injected store error: disk I/O error"


def kill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)
    # The signal is delivered on return from the kill system call; nothing after this runs.
    # Blocking here only guards against returning if it somehow was not.
    threading.Event().wait(10)
    raise RuntimeError("SIGKILL did not end the process")


class FaultSwitch:
    def __init__(self) -> None:
        self._armed: Optional[dict[str, str]] = None
        self._lock = threading.Lock()

    def arm(self, fault: Optional[dict[str, str]]) -> None:
        with self._lock:
            self._armed = fault

    @property
    def armed(self) -> Optional[dict[str, str]]:
        return self._armed

    def hit(self, point: str, make_store_error: Optional[Callable[[], BaseException]] = None) -> None:
        """Execution reached `point`. If that fault is armed it fires now, once: sigkill ends the
        process, throw raises InjectedFault, store-error raises the store's own error type."""
        with self._lock:
            fault = self._armed
            if fault is None or fault["point"] != point:
                return
            self._armed = None
        write_event({"event": "fault", "point": point, "kind": fault["kind"]})
        if fault["kind"] == "sigkill":
            kill_self()
        if fault["kind"] == "store-error":
            if make_store_error is None:
                raise RuntimeError(f"bug: store-error fault at {point}, which is not a store call")
            raise make_store_error()
        raise InjectedFault(point)

    def hit_all(self, points: list[str], make_store_error: Optional[Callable[[], BaseException]] = None) -> None:
        """Points that coincide physically (one write is several catalogue records)."""
        for p in points:
            self.hit(p, make_store_error)
