"""A model-driven build's whole configuration, and the cache key hashed from it.

Two builds share a key only when every item that could change the store is the
same: the variant, the harness, the conversation's content and the text the
model is shown of it (the dump's files, or the chunks), the builder model's
name, the role (its system prompt's hash, its user turn's template hash, its
tool set's description digest, rounds, output cap, effort, temperature), the
chunk budget, the pass limit and the record version.

The harness (:mod:`memdir.tools._harness`) picks the role's tool set and the
tool wording of its prompt, so each harness builds its own store. A ``center``
build hashes as it did before harnesses were part of the key (a spec written
then reads as ``center``), so its cached stores stay valid.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from functools import cache

from pydantic import BaseModel, ConfigDict

from memdir.agents import RoleConfig, load_prompt
from memdir.builders._catalog import TurnTemplate, not_model_built, variant_spec
from memdir.builders._record import BUILD_RECORD_VERSION
from memdir.builders._roles import BUILDER_ROLES
from memdir.builders._zero_cost import verbatim_files
from memdir.conversation import Conversation, chunk_conversation
from memdir.store import Store
from memdir.tools import make_toolset
from memdir.tools._harness import DEFAULT_HARNESS, harness_prompt, harness_spec

__all__ = [
    "BuildSpec",
    "builder_role",
    "conversation_hash",
    "toolset_digest",
    "turn_hash",
    "user_turn",
]


def builder_role(variant: str, conversation: Conversation, *,
                 harness: str = DEFAULT_HARNESS, max_rounds: int | None = None,
                 max_tokens: int | None = None, effort: str | None = None) -> RoleConfig:
    """The role a model-built variant runs under ``harness``.

    Its prompt is fitted to the conversation's locators and worded for the
    harness's tools, and its tool set is the harness's for the role. Settings
    left None keep the role's defaults.

    Raises:
        ValueError: ``variant`` is not built by a model, or ``harness`` is unknown.
    """
    spec = variant_spec(variant)
    if spec.role is None:
        raise ValueError(not_model_built(variant))
    changes: dict[str, object] = {
        "prompt": harness_prompt(spec.prompt_for(conversation.locator_kind), harness),
        "toolset": harness_spec(harness).toolset_for(spec.role),
    }
    if max_rounds is not None:
        changes["max_rounds"] = max_rounds
    if max_tokens is not None:
        changes["max_tokens"] = max_tokens
    if effort is not None:
        changes["reasoning_effort"] = effort
    return BUILDER_ROLES[spec.role].with_(**changes)


def conversation_hash(conversation: Conversation) -> str:
    """SHA-256 of the conversation's content (every session, turn, locator and date)."""
    return hashlib.sha256(conversation.model_dump_json().encode("utf-8")).hexdigest()


def _sha(parts: list[str]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def source_hash(variant: str, conversation: Conversation, chunk_tokens: int | None) -> str:
    """SHA-256 of what the builder is given, by the variant's source rule.

    Raises:
        ValueError: A variant built from chunks comes without its chunk budget.
    """
    rule = variant_spec(variant).source
    if rule == "chunks":
        if chunk_tokens is None:
            raise ValueError(f"a {variant} build needs its chunk budget")
        chunks = chunk_conversation(conversation, chunk_tokens)
        return _sha([part for c in chunks for part in (c.label, c.text)])
    if rule == "dump":
        return _sha([part for pair in verbatim_files(conversation) for part in pair])
    return _sha([])


def _turn(variant: str) -> TurnTemplate:
    turn = variant_spec(variant).turn
    if turn is None:
        raise ValueError(not_model_built(variant))
    return turn


def turn_hash(variant: str) -> str:
    """SHA-256 of the user-turn template the variant's builder sends.

    Raises:
        ValueError: No model builds ``variant``.
    """
    turn = _turn(variant)
    return load_prompt(turn.prompt, **{name: "{" + name + "}" for name in turn.fields}).sha256


def user_turn(variant: str, **fields: str) -> str:
    """The user turn the variant's builder sends, its template's fields filled.

    The template is the one :func:`turn_hash` hashes into the build key.

    Raises:
        ValueError: No model builds ``variant``, or the fields are not the template's.
    """
    return load_prompt(_turn(variant).prompt, **fields).text


@cache
def toolset_digest(name: str) -> str:
    """The description digest of a tool set (the same for every store)."""
    with tempfile.TemporaryDirectory(prefix="memdir-digest-") as scratch:
        return make_toolset(name, Store(scratch)).digest()


class BuildSpec(BaseModel):
    """Everything a model-built store depends on."""

    model_config = ConfigDict(frozen=True)

    variant: str
    conversation_id: str
    conversation_hash: str
    source_hash: str
    model: str
    role: str
    prompt_name: str
    prompt_hash: str
    turn_hash: str
    toolset: str | None
    toolset_digest: str | None
    max_rounds: int
    max_tokens: int | None
    effort: str | None
    temperature: float | None
    chunk_tokens: int | None = None
    max_passes: int | None = None
    record_version: int = BUILD_RECORD_VERSION
    harness: str = DEFAULT_HARNESS
    """The harness the builder wrote through (specs written before harnesses: center)."""

    @classmethod
    def make(cls, variant: str, conversation: Conversation, model: str, role: RoleConfig,
             *, chunk_tokens: int | None = None, max_passes: int | None = None,
             harness: str = DEFAULT_HARNESS) -> BuildSpec:
        """The spec of building ``variant`` from ``conversation`` with ``model`` in ``role``."""
        return cls(
            variant=variant, harness=harness, conversation_id=conversation.id,
            conversation_hash=conversation_hash(conversation),
            source_hash=source_hash(variant, conversation, chunk_tokens), model=model,
            role=role.role, prompt_name=role.prompt,
            prompt_hash=load_prompt(role.prompt).sha256, turn_hash=turn_hash(variant),
            toolset=role.toolset,
            toolset_digest=toolset_digest(role.toolset) if role.toolset else None,
            max_rounds=role.max_rounds, max_tokens=role.max_tokens,
            effort=role.reasoning_effort, temperature=role.temperature,
            chunk_tokens=chunk_tokens, max_passes=max_passes,
        )

    @property
    def key(self) -> str:
        """SHA-256 of the spec as canonical JSON (a center build's without its harness)."""
        data = self.model_dump(mode="json")
        if data["harness"] == DEFAULT_HARNESS:
            del data["harness"]
        blob = json.dumps(data, sort_keys=True)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    @property
    def folder_name(self) -> str:
        """The build's folder in the cache: readable prefix (variant, harness), key suffix.

        A center build's name has no harness part, as before harnesses were named.
        """
        stem = "".join(c if c.isalnum() or c in "-_." else "-" for c in self.conversation_id)
        harness = "" if self.harness == DEFAULT_HARNESS else f"__{_slug(self.harness)}"
        return f"{stem or 'conversation'}__{self.variant}{harness}__{self.key[:16]}"


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text)
