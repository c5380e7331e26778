"""What each model provider can do, in one table keyed by provider.

A model is named ``provider/model``; the part before the first slash picks the
profile. A profile says which API the calls go through, whether prompt caching
must be switched on explicitly, which models take a reasoning effort, whether
inspect_ai's side request that probes for reasoning summaries is to be avoided,
and whether the provider runs offline (no network, no cost). A provider missing
from the table gets :data:`DEFAULT_PROFILE`: only the output cap and temperature
are sent.

A provider's SDK that retries on its own is told not to: memdir retries every
call itself, one visible line per retry, within a time budget.

The offline providers are declared here once: ``memdir`` (the deterministic
policies such as ``memdir/grep-reader``, the zero-cost baseline) and
``mockllm`` (inspect_ai's scripted test model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from inspect_ai.model import Model

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "ProviderProfile",
    "is_offline",
    "is_policy",
    "profile",
]


@dataclass(frozen=True)
class ProviderProfile:
    """One provider's capabilities, as memdir uses them."""

    api: str
    """The API the calls go through (for the reader; inspect_ai picks the client)."""
    cache_prompt: bool = False
    """Prompt caching has to be asked for (Anthropic); others cache automatically or not at all."""
    effort_models: tuple[str, ...] | None = ()
    """Model-name prefixes that take a reasoning effort; None means every model does."""
    no_reasoning_summary: bool = False
    """Ask for no reasoning summary, so inspect_ai makes no billed probe call to check for it."""
    sdk_retries: bool = False
    """The provider's SDK retries on its own unless told ``max_retries=0`` (memdir retries
    itself, visibly; see :mod:`memdir.agents._calls`)."""
    usage_normalised: bool = False
    """inspect_ai's converter for this provider already takes cached tokens out of
    ``input_tokens``, so memdir's total-tokens guard must not take them out again."""
    offline: bool = False
    """Runs on this machine: no network, no API key, no cost."""
    policy: bool = False
    """A memdir policy rather than a language model (the zero-cost baseline)."""

    def takes_effort(self, model: str) -> bool:
        """Whether ``model`` (the name after the provider) accepts a reasoning effort."""
        if self.effort_models is None:
            return True
        return model.startswith(self.effort_models)


DEFAULT_PROFILE: Final = ProviderProfile(api="the provider's own")

PROFILES: Final[dict[str, ProviderProfile]] = {
    "openai": ProviderProfile(
        api="OpenAI Responses", effort_models=("gpt-5", "o1", "o3", "o4"),
        no_reasoning_summary=True, sdk_retries=True, usage_normalised=True,
    ),
    "anthropic": ProviderProfile(api="Anthropic Messages", cache_prompt=True, effort_models=None,
                                 sdk_retries=True, usage_normalised=True),
    "google": ProviderProfile(api="Gemini", effort_models=None, usage_normalised=True),
    "bedrock": ProviderProfile(api="AWS Bedrock Converse", effort_models=None,
                               usage_normalised=True),
    "azureai": ProviderProfile(api="Azure AI Inference", effort_models=None),
    "openai-api": ProviderProfile(api="OpenAI Chat Completions (any compatible server)",
                                  sdk_retries=True, usage_normalised=True),
    "memdir": ProviderProfile(api="memdir's offline policies", offline=True, policy=True),
    "mockllm": ProviderProfile(api="inspect_ai's scripted test model", offline=True),
}


def profile(model: Model | str) -> ProviderProfile:
    """The profile of ``model``'s provider (``provider/model``, or a model instance)."""
    provider = str(model).split("/", 1)[0]
    return PROFILES.get(provider, DEFAULT_PROFILE)


def is_offline(model: Model | str) -> bool:
    """Whether ``model`` runs on this machine at no cost (a memdir policy or mockllm)."""
    return profile(model).offline


def is_policy(model: Model | str) -> bool:
    """Whether ``model`` is a memdir policy (the zero-cost baseline), not a language model."""
    return profile(model).policy
