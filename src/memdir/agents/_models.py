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

__all__ = ["DEFAULT_MAX_RETRIES", "DEFAULT_TIMEOUT", "OFFLINE_MODEL", "resolve_model"]

OFFLINE_MODEL: Final = "memdir/grep-reader"
"""The deterministic, zero-cost search policy (no LLM)."""
DEFAULT_MAX_RETRIES: Final = 6
"""Retries inspect_ai makes on rate limits and transient errors before a call fails."""
DEFAULT_TIMEOUT: Final = 900
"""Seconds a call may take, retries included, before it fails."""


def resolve_model(
    model: Model | str,
    *,
    max_retries: int = DEFAULT_MAX_RETRIES,
    timeout: int = DEFAULT_TIMEOUT,
    max_connections: int | None = None,
    **model_args: Any,
) -> Model:
    """An inspect_ai model for ``model``, with retry and timeout settings.

    Args:
        model: A model instance (returned unchanged) or a ``provider/model`` name.
        max_retries: Retries on rate limits and transient errors.
        timeout: Seconds for a call including its retries.
        max_connections: Concurrent calls to the provider (inspect_ai's default if None).
        **model_args: Passed to the provider (e.g. ``custom_outputs`` for mockllm).

    Raises:
        ValueError: The name is not ``provider/model`` or names an unknown provider.
    """
    if isinstance(model, Model):
        return model
    if "/" not in model:
        raise ValueError(
            f"model {model!r} must be written provider/model, e.g. openai/gpt-5.4-mini, "
            f"anthropic/claude-sonnet-4-5, openai-api/<service>/<model>, or {OFFLINE_MODEL}"
        )
    import memdir.agents._providers  # noqa: F401  (registers memdir/grep-reader)

    config = GenerateConfig(
        max_retries=max_retries, timeout=timeout, max_connections=max_connections
    )
    return get_model(model, config=config, **model_args)
