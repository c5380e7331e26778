"""``memdir lint``: every way a store breaks the store contract, and the mechanical fixes."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape

from memdir.cli._common import ExitCode, StoreArg, console, json_errors, open_store
from memdir.store import Finding, fix_store, lint_store

__all__ = ["lint", "register"]


def _show(findings: list[Finding]) -> None:
    for f in findings:
        where = f"{f.path}:{f.line}" if f.line else f.path
        tag = " [green](fixable: --fix)[/]" if f.fixable else ""
        code = f"[yellow]{f.code} (warning)[/]" if f.severity == "warning" else f"[red]{f.code}[/]"
        console.print(f"[bold]{escape(where)}[/]: {code}: {escape(f.message)}{tag}")


@json_errors
def lint(
    store_path: StoreArg,
    fix: Annotated[
        bool,
        typer.Option("--fix", help="Apply the mechanical fixes first (missing header, name "
                     "not matching the file, multi-line description), then lint again."),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object instead of text.")
    ] = False,
    skills: Annotated[
        bool,
        typer.Option("--skills", help="Also require the skill setting's metadata "
                     "(metadata.type and metadata.sources) on every file."),
    ] = False,
) -> None:
    """Check a store against the store contract and list every defect.

    Checked: frontmatter on line 1 with a kebab-case name equal to the file
    stem and a one-line description; metadata is a map (with --skills, the
    skill schema); every cross-reference "see /memories/..." resolves to a file
    and, when it names one, a section; only markdown files in the store.

    With --fix, the defects that need no judgement are repaired in place and
    reported as fixed; what remains is listed as usual.

    A markdown file without any header (as Claude's memory tool writes them)
    is a warning: it is listed and searched, and --fix adds the header.

    Exit status: 0 clean or only warnings, 1 defects remain, 2 no such store.

    For example:

        memdir lint ./memories

        memdir lint ./memories --fix --json
    """
    store = open_store(store_path, reads_only=not fix)  # a fix sweeps before it writes
    fixed = fix_store(store) if fix else []
    findings = lint_store(store, skills=skills)
    errors = [f for f in findings if f.severity == "error"]
    if as_json:
        payload = {
            "store": str(store.root),
            "clean": not errors,
            "fixed": [f.to_dict() for f in fixed],
            "findings": [f.to_dict() for f in findings],
        }
        typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        for f in fixed:
            console.print(f"[green]fixed[/] {escape(f.path)}: {f.code}")
        _show(findings)
        files = len(store.files())
        warned = len(findings) - len(errors)
        warnings = f", {warned} warning(s)" if warned else ""
        if errors:
            console.print(f"[bold red]{len(errors)} defect(s)[/]{warnings} in {files} file(s).")
        else:
            console.print(f"[bold green]clean[/]: {files} file(s), no defects{warnings}.")
    if errors:
        raise typer.Exit(int(ExitCode.FINDINGS))


def register(app: typer.Typer) -> None:
    """Add ``lint`` to the command line."""
    app.command("lint")(lint)
