"""One model call with visible, time-bounded retries, and failures that say what happened.

inspect_ai retries transient failures silently (its retry lines go to a debug
log level) and the provider SDKs retry once more underneath it, so a failing
provider could keep a command waiting for many minutes without a word. memdir
therefore asks inspect_ai for no retries of its own (and the SDKs too, see
:func:`memdir.agents.resolve_model`) and retries here: the provider's own
classifier (``ModelAPI.should_retry``) decides what is transient, each retry is
logged as one line with the provider's message on the ``memdir.agents``
logger, and the whole call, waits included, ends by the model's ``timeout``
(``MEMDIR_MODEL_TIMEOUT`` where the model sets none).
When it gives up, the error names the server's message: the HTTP status with
the body's text, or the connection error beneath the SDK's generic one.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from typing import Final

from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput
from inspect_ai.tool import ToolChoice, ToolInfo

from memdir.config import get_settings

__all__ = ["CallFailed", "call_model", "describe_error"]

logger = logging.getLogger("memdir.agents")

RETRY_WAIT_S: Final = 1.0
"""The first wait between attempts; it doubles on each retry."""
RETRY_WAIT_MAX_S: Final = 20.0
"""The longest wait between two attempts."""
DEFAULT_RETRIES: Final = 6
"""Retries when the model's config sets none."""
_BODY_CHARS: Final = 300
_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")


class CallFailed(RuntimeError):
    """A model call failed for good: not transient, out of retries, or out of time.

    Attributes:
        retries: How many retries were made before giving up.
    """

    def __init__(self, message: str, retries: int) -> None:
        super().__init__(message)
        self.retries = retries


def _root(exc: BaseException) -> BaseException:
    """The provider's exception inside inspect_ai's retry wrapper (tenacity's RetryError)."""
    last = getattr(exc, "last_attempt", None)
    if last is not None and getattr(last, "failed", False):
        inner = last.exception()
        if isinstance(inner, BaseException):
            return inner
    return exc


def _body_text(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    try:
        text = str(getattr(response, "text", "") or "")
    except Exception:  # an unread streaming body cannot be shown; the status still is
        return ""
    text = _SPACE.sub(" ", _TAG.sub(" ", text)).strip()
    return text[:_BODY_CHARS] + ("..." if len(text) > _BODY_CHARS else "")


def describe_error(exc: BaseException) -> str:
    """One line for a failed call: the error's type and message, and what the server said.

    The SDKs' messages can hide the server's words (``Error code: 502`` for an
    HTML error page, ``Connection error.`` for a dropped connection): a body that
    is not JSON is shown as text, and an error with no HTTP response is followed
    down to its cause.
    """
    exc = _root(exc)
    message = _SPACE.sub(" ", str(exc)).strip() or "no message"
    parts = [f"{type(exc).__name__}: {message}"]
    if getattr(exc, "response", None) is not None:
        parsed = isinstance(getattr(exc, "body", None), (dict, list))  # JSON: in the message
        body = "" if parsed else _body_text(exc)
        if body and body not in message:
            parts.append(f"server said: {body}")
        return " - ".join(parts)
    cause = exc.__cause__ or exc.__context__
    for _ in range(3):
        if cause is None:
            break
        text = _SPACE.sub(" ", str(cause)).strip()
        if text and text not in " ".join(parts):
            parts.append(f"{type(cause).__name__}: {text}")
        cause = cause.__cause__ or cause.__context__
    return " - ".join(parts)


def _retries(count: int) -> str:
    return f"{count} retry" if count == 1 else f"{count} retries"


def _decision(llm: Model, exc: BaseException) -> tuple[bool, float | None]:
    """Whether the provider calls ``exc`` transient, and the wait it asked for."""
    try:
        decision = llm.api.should_retry(exc)  # type: ignore[arg-type]
    except Exception:  # a classifier that fails on an odd error: treat the error as final
        return False, None
    return bool(decision), getattr(decision, "retry_after", None)


async def call_model(
    llm: Model,
    messages: list[ChatMessage],
    tools: list[ToolInfo],
    tool_choice: ToolChoice | None,
    config: GenerateConfig,
    what: str,
) -> tuple[ModelOutput, int]:
    """Call ``llm`` once, retrying transient failures within its retry count and time budget.

    Args:
        llm: The model; its ``max_retries`` and ``timeout`` config bound the retries.
        messages: The conversation so far (copied, never changed).
        tools: Tool declarations (may be empty).
        tool_choice: As for :meth:`inspect_ai.model.Model.generate`.
        config: The per-call generation settings.
        what: Names the call in retry lines and errors, e.g. ``search call 3``.

    Returns:
        The output and how many retries it took.

    Raises:
        CallFailed: The call failed for good; the message names the server's reply.
    """
    retries_allowed = llm.config.max_retries
    if retries_allowed is None:
        retries_allowed = DEFAULT_RETRIES
    budget = float(llm.config.timeout or get_settings().model_timeout)
    deadline = time.monotonic() + budget
    once = config.merge(GenerateConfig(max_retries=0))
    retries = 0
    while True:
        left = deadline - time.monotonic()
        try:
            async with asyncio.timeout(max(left, 0.001)):
                output = await llm.generate(list(messages), tools=tools,
                                            tool_choice=tool_choice, config=once)
            return output, retries
        except Exception as exc:
            if isinstance(exc, TimeoutError) and time.monotonic() >= deadline:
                raise CallFailed(
                    f"{what} to {llm} got no reply within the {budget:.0f} s allowed "
                    f"(after {_retries(retries)})", retries) from None
            error = describe_error(exc)
            transient, asked = _decision(llm, _root(exc))
            wait = min(RETRY_WAIT_S * 2**retries, RETRY_WAIT_MAX_S)
            if asked is not None:
                wait = max(wait, asked)
            left = deadline - time.monotonic()
            if not transient:
                raise CallFailed(f"{what} to {llm} failed: {error}", retries) from exc
            if retries >= retries_allowed or wait >= left:
                raise CallFailed(
                    f"{what} to {llm} failed after {_retries(retries)} "
                    f"({budget:.0f} s allowed): {error}", retries) from exc
            retries += 1
            logger.warning("%s to %s failed (%s); retry %d of %d in %.0f s",
                           what, llm, error, retries, retries_allowed, wait)
            await asyncio.sleep(wait)
