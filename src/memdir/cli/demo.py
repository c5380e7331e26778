"""``memdir demo``: the tour a new user runs first; offline, no model, no network.

The demo is a list of steps that share one :class:`DemoContext`. Each step
prints what it did and says whether it went well; the command's exit status
is 1 when any step did not. Later features add steps (for instance agents
answering questions) by appending to :data:`STEPS`.
"""

from __future__ import annotations

import json
import shlex
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.rule import Rule

from memdir.cli._common import ExitCode, call_tool, console, fail, runnable
from memdir.cli.tree import tree_lines
from memdir.sample import build_sample_store, load_sample_conversation
from memdir.store import ROOT, Store, lint_store
from memdir.tools import ToolSet, make_toolset

__all__ = ["STEPS", "DemoContext", "DemoStep", "demo", "register", "run_demo"]


@dataclass
class DemoContext:
    """What the steps share: where the store goes, the store once built, tool sets by name."""

    out: Path
    store: Store | None = None
    toolsets: dict[str, ToolSet] = field(default_factory=dict)

    def built(self) -> Store:
        """The store; a step that needs it runs after the build step."""
        if self.store is None:
            raise RuntimeError("the demo store has not been built yet")
        return self.store

    def toolset(self, name: str) -> ToolSet | None:
        """The named tool set over the store, or None if this installation lacks it."""
        if name not in self.toolsets:
            try:
                self.toolsets[name] = make_toolset(name, self.built())
            except ImportError:
                return None
        return self.toolsets[name]


@dataclass(frozen=True)
class DemoStep:
    """One step: a title and a function that returns whether the step went well."""

    title: str
    run: Callable[[DemoContext], bool]


def _build(ctx: DemoContext) -> bool:
    conv = load_sample_conversation()
    ctx.store = build_sample_store(ctx.out)
    console.print(
        f"The sample conversation: {' and '.join(conv.speakers)}, {len(conv.sessions)} sessions "
        f"({conv.sessions[0].date} to {conv.sessions[-1].date}), {conv.turn_count()} turns."
    )
    where = escape(str(ctx.out))
    console.print(f"Built a store of {len(ctx.store.files())} files at [bold]{where}[/]: "
                  "one file per person, event and plan, each fact followed by the turn it "
                  "came from, e.g. \\[S2T5] = session 2, turn 5.")
    return True


def _tree(ctx: DemoContext) -> bool:
    store = ctx.built()
    for line in tree_lines(ROOT, store.walk(ROOT)):
        console.print(line)
    return True


def _lint(ctx: DemoContext) -> bool:
    findings = lint_store(ctx.built())
    for finding in findings:
        console.print(f"[red]{escape(str(finding))}[/]")
    if findings:
        console.print(f"[bold red]{len(findings)} defect(s)[/]: the sample store should be clean.")
        return False
    console.print("[bold green]clean[/]: every file has a valid header, every cross-reference "
                  "resolves.")
    return True


# The calls a search agent might make to learn where Maya lives now and where she lived before.
CALLS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("read", "view", {"path": ROOT}),
    ("read", "grep", {"pattern": "Bristol|Leeds", "path": "/memories/people"}),
    ("read", "toc", {"path": "/memories/people/maya.md"}),
    ("read", "section_read", {"path": "/memories/people/maya.md", "heading_path": ["Home"]}),
    ("read", "view", {"path": "/memories/people/theo.md", "view_range": [9, 19]}),
    ("bm25", "search", {"query": "Maya cat", "k": 3}),
)


def _calls(ctx: DemoContext) -> bool:
    ok = True
    for set_name, name, args in CALLS:
        toolset = ctx.toolset(set_name)
        console.print(f"[bold cyan]> {name}({escape(json.dumps(args))})[/]"
                      f"  [dim]{set_name} set[/]")
        if toolset is None:
            console.print(f"[yellow]skipped: the {set_name} set is not available here.[/]\n")
            continue
        result = call_tool(toolset, name, args)
        typer.echo(result.content)
        console.print()
        ok = ok and not result.is_error
    return ok


# Questions whose answers sit in the sample store; the second needs the dated past entry.
QUESTIONS: tuple[str, ...] = (
    "Where does Maya live now?",
    "Where did Maya work before she moved to Bristol?",
    "What is the name of Maya's cat?",
)


def _answers(ctx: DemoContext) -> bool:
    # Imported here: inspect_ai takes seconds to load and the other steps never need it.
    import anyio

    from memdir.agents import ask
    from memdir.cli.ask import print_answer

    store = ctx.built()
    console.print("No model is configured here, so memdir's offline grep-reader answers: a "
                  "deterministic zero-cost baseline that searches with the same tools a model "
                  "uses. Set MEMDIR_MODEL (e.g. openai/gpt-5.4-mini) to use a real search agent.\n")
    ok = True
    for question in QUESTIONS:
        console.print(f"[bold cyan]? {escape(question)}[/]")
        answer = anyio.run(ask, store, question)
        print_answer(answer, note=False)
        console.print()
        ok = ok and bool(answer.citations) and answer.citations_resolve
    return ok


STEPS: list[DemoStep] = [
    DemoStep("Build a store from the sample conversation", _build),
    DemoStep("The store as an agent first sees it: names and descriptions", _tree),
    DemoStep("Lint: check the store contract", _lint),
    DemoStep("Tool calls, printed exactly as a model would see them", _calls),
    DemoStep("Questions answered from the store, each citation checked to exist", _answers),
]


def run_demo(out: Path, steps: Sequence[DemoStep] = STEPS) -> bool:
    """Run ``steps`` in order against a store built in ``out``; True if all went well."""
    ctx = DemoContext(out)
    ok = True
    for number, step in enumerate(steps, start=1):
        console.print(Rule(f"[bold]{number}. {step.title}[/]", align="left"))
        ok = step.run(ctx) and ok
    return ok


def demo(
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Build the store here (a new or empty folder). "
                     "Default: a new temporary folder, kept afterwards."),
    ] = None,
) -> None:
    """Build a small store from the shipped sample conversation and tour it.

    Runs offline, with no model: builds the sample store, shows its tree with
    descriptions, lints it, makes a few tool calls (view, grep, toc,
    section_read, a BM25 search), printing each result exactly as a model
    would see it, and answers a few questions with the offline grep-reader
    search policy (a zero-cost baseline, no LLM), each citation checked. The
    store is kept, so you can carry on with `memdir tree`,
    `memdir grep` or `memdir serve` on it.

    Exit status: 0 every step went well, 1 a step found a problem, 2 the
    output folder is not usable.

    For example:

        memdir demo --out ./demo-store
    """
    if out is None:
        out = Path(tempfile.mkdtemp(prefix="memdir-demo-"))
    elif out.exists() and (not out.is_dir() or any(out.iterdir())):
        fail(f"{out} exists and is not an empty folder.",
             "choose a new folder, or leave out --out to use a temporary one.")
    ok = run_demo(out)
    where = escape(shlex.quote(str(out)))
    console.print(Rule())
    console.print(runnable(f"The store is at [bold]{where}[/]. Try: [bold]memdir tree {where}[/] "
                           f"or [bold]memdir serve {where}[/]"))
    if not ok:
        raise typer.Exit(int(ExitCode.FINDINGS))


def register(app: typer.Typer) -> None:
    """Add ``demo`` to the command line."""
    app.command("demo")(demo)
