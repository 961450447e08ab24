"""Classify an exception a framework call raised into a protocol Outcome."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from .faults import INJECTED_STORE_ERROR, InjectedFault
from .protocol import error_message
from .runview import error
from .workflow import first_error_field


def _chain(e: BaseException):
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        yield e
        e = e.__cause__ or e.__context__


def outcome_of_error(e: BaseException) -> dict[str, Any]:
    """Injected faults and store errors are found through the cause chain (frameworks wrap them);
    pydantic validation errors name their first field."""
    message = error_message(e)
    for link in _chain(e):
        if isinstance(link, InjectedFault):
            return error("injected", message)
    for link in _chain(e):
        if INJECTED_STORE_ERROR in str(link):
            return error("store", message)
    for link in _chain(e):
        if isinstance(link, ValidationError):
            return error("validation", message, first_error_field(link))
    return error("other", message)
