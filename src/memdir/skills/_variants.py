"""The skill setting's memory variants behind one interface.

A variant does two things per task: ``retrieve`` before the attempt (what the
execution agent gets as guidance) and ``integrate`` after it (how the store
learns from the attempt). The runner calls them in that order, so task t only
ever reads a store built from the attempts before t.

- ``none``: no store, no guidance.
- ``episode_log``: each rendered trajectory is appended verbatim as
  ``/memories/episodes/NNN-<task folder>.md`` (NNN = position + 1, zero model
  cost; the family is in ``metadata.family``); the retriever (prompt
  ``retriever-episodes``, the read set) reads the log and cites the episodes
  that may help, and the cited episodes are served in full. The retriever's
  calls are billed like any retrieval.
- ``episode_log_recent``: the same log, served by a fixed rule instead of a
  model: the ``k`` most recent episodes of the task's goal family, in full,
  newest first, at zero model cost.
- ``curated_skills``: the curator (the plain write set, no gate; the skills-only
  prompt ``curator-skills``) distils each attempt into skills; the retriever
  (prompt ``retriever-cite-broad``, also skills-only) cites every skill that may
  help, and the cited files are served in full.
- ``curated_skills_mem``: the curator (prompt ``curator``: skills and notes, the
  outcome gate) writes through the gated set (schema plus outcome gate), and the
  retriever (prompt ``retriever-cite``, the strict bar)
  cites only files that clearly apply, served in full.
- ``curated_skills_mem_gs``: the gated store; the retriever (prompt
  ``retriever-guidance``, user turn ``turn-task-guidance``) writes guidance for
  this task with provenance lines, and its reply is served word for word: the
  fixed :data:`NO_EXPERIENCE` line when nothing applies, and nothing at all when
  the reply is only citations (a failed retrieval: it points at files the
  execution agent cannot open).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol, get_args

from inspect_ai.model import Model

from memdir.agents import EpisodeRecord, find_citations, load_prompt, run_agent
from memdir.skills._families import AlfworldTask
from memdir.skills._gate import Attempt, GatedLibrary
from memdir.skills._roles import CURATOR_ROLE, RETRIEVER_ROLE
from memdir.skills._trajectory import Trajectory, render_trajectory
from memdir.store import Frontmatter, Store, parse_file, render_file, slugify
from memdir.tools import DEFAULT_HARNESS, ToolSet, harness_prompt, harness_spec, make_toolset

__all__ = [
    "CURATOR_PROMPTS",
    "EPISODES",
    "NO_EXPERIENCE",
    "RETRIEVER_PROMPTS",
    "TASK_TURN",
    "TASK_TURNS",
    "VARIANT_NAMES",
    "CuratedVariant",
    "EpisodeLogVariant",
    "Integrated",
    "NoStoreVariant",
    "Served",
    "Variant",
    "VariantName",
    "make_variant",
    "variant_inputs",
]

VariantName = Literal[
    "none", "episode_log", "episode_log_recent", "curated_skills", "curated_skills_mem",
    "curated_skills_mem_gs"
]
VARIANT_NAMES: tuple[str, ...] = get_args(VariantName)
EPISODES = "/memories/episodes"
NO_EXPERIENCE = "Nothing in the library applies to this task; go by your own judgment."
"""The guidance retriever's whole reply when no entry bears on the task (its prompt says so)."""
_NOTHING = ("none", "no relevant experience", NO_EXPERIENCE.lower().rstrip("."))
TASK_TURN = "turn-task"
"""The retriever's user turn (the task's goal)."""
TASK_TURNS = {"curated_skills_mem_gs": "turn-task-guidance"}
"""A variant's own retriever user turn, where it has one (else :data:`TASK_TURN`)."""


@dataclass
class Served:
    """What retrieval handed the execution agent for one task."""

    guidance: str = ""
    paths: list[str] = field(default_factory=list)
    record: EpisodeRecord | None = None


@dataclass
class Integrated:
    """What integrating one attempt cost and what the gate refused."""

    record: EpisodeRecord | None = None
    refusals: list[str] = field(default_factory=list)


class Variant(Protocol):
    """One memory variant: retrieval before each attempt, integration after it."""

    name: str
    store: Store | None

    async def retrieve(self, position: int, task: AlfworldTask) -> Served:
        """Guidance for the attempt at ``position`` from the store as it stands."""
        ...

    async def integrate(self, position: int, trajectory: Trajectory, served: Served) -> Integrated:
        """Learn from the finished attempt at ``position``."""
        ...


class NoStoreVariant:
    """No memory at all: the execution agent's floor."""

    name = "none"
    store: Store | None = None

    async def retrieve(self, position: int, task: AlfworldTask) -> Served:
        """Nothing to serve."""
        return Served()

    async def integrate(self, position: int, trajectory: Trajectory, served: Served) -> Integrated:
        """Nothing to learn into."""
        return Integrated()


def _serve_files(store: Store, paths: list[str]) -> str:
    return "\n\n".join(f"### {path}\n\n{store.read(path).strip()}" for path in paths)


def retriever_toolset(harness: str = DEFAULT_HARNESS) -> str:
    """The retriever's tool set under ``harness`` (its search set; ``read`` under center)."""
    return harness_spec(harness).toolset_for("retriever")


_LEAD = re.compile(r"^\s*(?:[-*\u2022]\s*|\d+[.)]\s*)?(?:source:\s*)?", re.IGNORECASE)


def _nothing(text: str) -> bool:
    return text.strip().lower().rstrip(".") in _NOTHING


def _only_citations(text: str) -> bool:
    """Whether every line of a reply opens with a citation: paths instead of guidance."""
    lines = [_LEAD.sub("", line) for line in text.splitlines() if line.strip()]
    starts = {c.raw for c in find_citations(text)}
    return bool(lines) and all(any(line.startswith(raw) for raw in starts) for line in lines)


async def _cite(model: Model | str, variant: str, store: Store, task: AlfworldTask,
                harness: str) -> tuple[str, list[str], EpisodeRecord]:
    """Run ``variant``'s retriever over ``store`` for ``task``: reply, cited paths, record."""
    toolset = retriever_toolset(harness)
    name = harness_prompt(RETRIEVER_PROMPTS[variant], harness)
    turn = load_prompt(TASK_TURNS.get(variant, TASK_TURN), task=task.goal).text
    run = await run_agent(model, RETRIEVER_ROLE.with_(prompt=name, toolset=toolset),
                          load_prompt(name), turn, make_toolset(toolset, store))
    text = run.text.strip()
    cited = list(dict.fromkeys(c.path for c in find_citations(text) if store.exists(c.path)))
    if _nothing(text):
        cited = []
    return text, cited, run.record


class EpisodeLogVariant:
    """Appends every rendered trajectory; serves the episodes a retriever cites, or the k latest.

    Args:
        store: The store (episodes go under ``/memories/episodes``).
        retriever: The retriever's model (``episode_log``); ``None`` serves by the
            fixed rule instead (``episode_log_recent``).
        k: How many episodes the fixed rule serves per task.
        harness: Whose search set the retriever reads with.
    """

    def __init__(self, store: Store, retriever: Model | str | None = None, k: int = 2,
                 harness: str = DEFAULT_HARNESS) -> None:
        self.name = "episode_log" if retriever is not None else "episode_log_recent"
        self.harness = harness
        self.store: Store | None = store
        self._store = store
        self.retriever = retriever
        self.k = k

    def episodes(self) -> list[tuple[int, str, str]]:
        """(position, family, path) of every episode file, oldest first."""
        found: list[tuple[int, str, str]] = []
        if not self._store.is_dir(EPISODES):
            return found
        for path in self._store.files(EPISODES):
            stem = path.rsplit("/", 1)[-1].removesuffix(".md")
            header = parse_file(self._store.read(path), stem).frontmatter
            meta = header.metadata if header is not None else None
            family = meta.get("family") if meta is not None else None
            if stem[:3].isdigit() and isinstance(family, str):
                found.append((int(stem[:3]), family, path))
        return sorted(found)

    async def retrieve(self, position: int, task: AlfworldTask) -> Served:
        """The cited episodes (or the k latest of the family), whole; an empty log costs nothing."""
        if self.retriever is None:
            same = [path for _, family, path in self.episodes() if family == task.family]
            chosen = list(reversed(same[-self.k:])) if self.k > 0 else []
            return Served(guidance=_serve_files(self._store, chosen), paths=chosen)
        if not self._store.files():
            return Served()
        _, cited, record = await _cite(self.retriever, self.name, self._store, task,
                                       self.harness)
        return Served(guidance=_serve_files(self._store, cited), paths=cited, record=record)

    async def integrate(self, position: int, trajectory: Trajectory, served: Served) -> Integrated:
        """Write the trajectory verbatim as a new episode file."""
        folder = trajectory.task_id.split("/", 1)[0]
        stem = f"{position + 1:03d}-{slugify(folder)}"
        outcome = "success" if trajectory.success else "failure"
        header = Frontmatter(
            name=stem,
            description=f"Episode {position + 1}: {trajectory.goal} ({outcome}, "
                        f"{trajectory.steps_used} steps)",
            metadata={"type": "note", "family": trajectory.family,
                      "sources": [{"task": trajectory.task_id, "outcome": outcome}]},
        )
        self._store.create(f"{EPISODES}/{stem}.md",
                           render_file(header, render_trajectory(trajectory)))
        return Integrated()


def _curation_turn(trajectory: Trajectory, served: Served, store: Store) -> str:
    outcome = "SUCCESS" if trajectory.success else "FAILURE"
    in_play = _serve_files(store, [p for p in served.paths if store.exists(p)])
    return (f"The attempt at task {trajectory.task_id} ended in {outcome}.\n\n"
            "## Library entries in play for this attempt\n\n"
            f"{in_play or '(none were served)'}\n\n"
            "## The attempt's trajectory\n\n" + render_trajectory(trajectory))


RETRIEVER_PROMPTS = {
    "episode_log": "retriever-episodes",
    "curated_skills": "retriever-cite-broad",
    "curated_skills_mem": "retriever-cite",
    "curated_skills_mem_gs": "retriever-guidance",
}
"""The retriever's prompt per variant with a retriever: episodes, broad, strict, guidance."""
CURATOR_PROMPTS = {
    "curated_skills": "curator-skills",
    "curated_skills_mem": "curator",
    "curated_skills_mem_gs": "curator",
}
"""The curator's prompt per curated variant: skills only (ungated), or skills and notes."""


def _curator_tools(name: str, store: Store, library: GatedLibrary | None = None,
                   harness: str = DEFAULT_HARNESS) -> ToolSet:
    """The curator's tools: the harness's builder set, gated except for ``curated_skills``."""
    builder = harness_spec(harness).toolset_for("curator")
    if name == "curated_skills":
        return make_toolset(builder, store)
    return (library or GatedLibrary(store, builder)).toolset()


def variant_inputs(name: str, harness: str = DEFAULT_HARNESS
                   ) -> tuple[list[str], list[str | Callable[[Store], ToolSet]]]:
    """The prompts and tool sets a variant's memory roles use under ``harness`` (run pins).

    Tool sets come as registered names, or as a factory of a set the variant
    assembles itself (the gated library's).
    """
    if name not in RETRIEVER_PROMPTS:
        return [], []
    retriever = harness_prompt(RETRIEVER_PROMPTS[name], harness)
    turn = TASK_TURNS.get(name, TASK_TURN)
    if name not in CURATOR_PROMPTS:
        return [retriever, turn], [retriever_toolset(harness)]
    return ([retriever, turn, harness_prompt(CURATOR_PROMPTS[name], harness)],
            [retriever_toolset(harness),
             lambda store: _curator_tools(name, store, harness=harness)])


class CuratedVariant:
    """A library the curator builds after each attempt and the retriever reads before one.

    Args:
        name: ``curated_skills``, ``curated_skills_mem`` or ``curated_skills_mem_gs``.
        store: The library.
        curator: The curator's model.
        retriever: The retriever's model.
        harness: Whose builder set the curator writes with and whose search set
            the retriever reads with.

    Raises:
        ValueError: ``name`` is not one of the curated variants.
    """

    def __init__(self, name: str, store: Store, curator: Model | str,
                 retriever: Model | str, harness: str = DEFAULT_HARNESS) -> None:
        if name not in CURATOR_PROMPTS:
            raise ValueError(f"unknown curated variant {name!r}; choose one of "
                             f"{', '.join(CURATOR_PROMPTS)}")
        self.name = name
        self.store: Store | None = store
        self._store = store
        self.curator = curator
        self.retriever = retriever
        self.gated = name != "curated_skills"
        self.synthesize = name == "curated_skills_mem_gs"
        self.harness = harness
        self.library = GatedLibrary(store, harness_spec(harness).toolset_for("curator")
                                    if self.gated else "write")

    async def retrieve(self, position: int, task: AlfworldTask) -> Served:
        """Run the retriever; an empty library is skipped without a model call."""
        if not self._store.files():
            return Served()
        text, cited, record = await _cite(self.retriever, self.name, self._store, task,
                                          self.harness)
        if self.synthesize:
            if _only_citations(text):  # paths the agent cannot open: a failed retrieval
                return Served(record=record)
            return Served(guidance=text, paths=cited, record=record)  # verbatim, fallback too
        if _nothing(text):
            return Served(record=record)
        return Served(guidance=_serve_files(self._store, cited), paths=cited, record=record)

    async def integrate(self, position: int, trajectory: Trajectory, served: Served) -> Integrated:
        """Run the curator over the attempt, through the gated write set when gated."""
        self.library.attempt = Attempt(trajectory.task_id, trajectory.success)
        self.library.refusals = []
        tools = _curator_tools(self.name, self._store, self.library, self.harness)
        prompt = harness_prompt(CURATOR_PROMPTS[self.name], self.harness)
        run = await run_agent(self.curator, CURATOR_ROLE.with_(prompt=prompt, toolset=tools.name),
                              load_prompt(prompt),
                              _curation_turn(trajectory, served, self._store), tools)
        return Integrated(record=run.record, refusals=list(self.library.refusals))


def make_variant(name: str, store: Store | None, *, curator: Model | str | None = None,
                 retriever: Model | str | None = None, k: int = 2,
                 harness: str = DEFAULT_HARNESS) -> Variant:
    """Build the named variant over ``store``, its roles using ``harness``'s tool sets.

    Raises:
        ValueError: an unknown name, or a missing store or model the variant needs.
    """
    if name == "none":
        return NoStoreVariant()
    if name not in VARIANT_NAMES:
        raise ValueError(f"unknown variant {name!r}; choose one of {', '.join(VARIANT_NAMES)}")
    if store is None:
        raise ValueError(f"the {name} variant needs a store")
    if name == "episode_log_recent":
        return EpisodeLogVariant(store, k=k)
    if name == "episode_log":
        if retriever is None:
            raise ValueError("the episode_log variant needs a retriever model "
                             "(episode_log_recent serves the latest episodes without one)")
        return EpisodeLogVariant(store, retriever, harness=harness)
    if curator is None or retriever is None:
        raise ValueError(f"the {name} variant needs a curator model and a retriever model")
    return CuratedVariant(name, store, curator, retriever, harness)
