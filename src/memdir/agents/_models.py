"""Models come from inspect_ai's model layer; memdir writes no provider code.

A model is named ``provider/model`` everywhere: ``openai/gpt-5.4-mini``,
``anthropic/claude-...``, ``openai-api/<service>/<model>`` for any
OpenAI-compatible server (its base URL and key come from
``<SERVICE>_BASE_URL`` / ``<SERVICE>_API_KEY``, read by inspect_ai),
``mockllm/model`` in tests, and ``memdir/grep-reader`` for the offline policy.
"""

from __future__ import annotations

from typing import Any, Final

from inspect_ai.model import GenerateConfig, Model, get_model

from memdir.agents._profiles import profile

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "OFFLINE_MODEL",
    "ModelSetupError",
    "resolve_model",
]

OFFLINE_MODEL: Final = "memdir/grep-reader"
"""The deterministic, zero-cost search policy (no LLM)."""
DEFAULT_MAX_RETRIES: Final = 6
"""Retries inspect_ai makes on rate limits and transient errors before a call fails."""


class ModelSetupError(ValueError):
    """A model cannot be used here: its API key is not set or its provider SDK is missing."""


def _one_line(text: str) -> str:
    """inspect_ai's prerequisite message as one plain line (no rich markup, no ERROR prefix)."""
    from rich.errors import MarkupError
    from rich.text import Text

    try:
        plain = Text.from_markup(text).plain
    except MarkupError:  # not markup after all: keep the text as it is
        plain = text
    plain = plain.strip().removeprefix("ERROR:")
    lines = [line.strip() for line in plain.splitlines() if line.strip()]
    return " ".join(
        line if i == len(lines) - 1 or line.endswith((".", ":", ";", ",")) else line + ":"
        for i, line in enumerate(lines)
    )


def resolve_model(
    model: Model | str,
    *,
    max_retries: int = DEFAULT_MAX_RETRIES,
    timeout: int | None = None,
    max_connections: int | None = None,
    **model_args: Any,
) -> Model:
    """An inspect_ai model for ``model``, with retry and timeout settings.

    Args:
        model: A model instance (returned unchanged) or a ``provider/model`` name.
        max_retries: Retries on rate limits and transient errors.
        timeout: Seconds for a call including its retries (None: the
            ``MEMDIR_MODEL_TIMEOUT`` setting, 900 s unless set; ``memdir ask``
            passes ``MEMDIR_ASK_TIMEOUT``, a minute).
        max_connections: Concurrent calls to the provider (inspect_ai's default if None).
        **model_args: Passed to the provider (e.g. ``custom_outputs`` for mockllm).

    Raises:
        ModelSetupError: The provider's API key is not set or its SDK is not installed
            (a ValueError; the message names what to set or install).
        ValueError: The name is not ``provider/model`` or names an unknown provider.
    """
    if isinstance(model, Model):
        return model
    if "/" not in model:
        raise ValueError(
            f"model {model!r} must be written provider/model, e.g. openai/gpt-5.4-mini, "
            f"anthropic/claude-sonnet-4-5, openai-api/<service>/<model>, or {OFFLINE_MODEL}"
        )
    from inspect_ai._util.error import PrerequisiteError

    import memdir.agents._providers  # noqa: F401  (registers memdir/grep-reader)
    from memdir.config import get_settings

    if timeout is None:
        timeout = get_settings().model_timeout
    config = GenerateConfig(
        max_retries=max_retries, timeout=timeout, max_connections=max_connections
    )
    if profile(model).sdk_retries:
        model_args.setdefault("max_retries", 0)  # memdir retries, visibly (agents._calls)
    try:
        return get_model(model, config=config, **model_args)
    except PrerequisiteError as exc:
        raise ModelSetupError(f"cannot use {model}: {_one_line(str(exc))}") from None
