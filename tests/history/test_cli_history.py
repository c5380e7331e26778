"""``memdir history STORE ...`` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from memdir.cli import history as history_cli
from memdir.store import Store

RUN = CliRunner()


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """Test harness."""

    history_cli.register(app)
    return app


def _doc(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {name} notes\n---\n{body}\n"


def test_init_snapshot_log_show_diff_verify(store: Store, tmp_path: Path) -> None:
    root = str(store.root)
    app = _app()
    assert RUN.invoke(app, ["history", root, "init"]).exit_code == 0
    store.create("/memories/a.md", _doc("a", "first"))
    first = RUN.invoke(app, ["history", root, "snapshot", "--message", "chunk 1"])
    assert first.exit_code == 0 and len(first.output.strip()) == 40
    store.write("/memories/a.md", _doc("a", "second"))
    store.create("/memories/b.md", _doc("b", "new"))
    assert RUN.invoke(app, ["history", root, "snapshot", "--message", "chunk 2"]).exit_code == 0

    log = RUN.invoke(app, ["history", root, "log", "--json"])
    assert [s["message"] for s in json.loads(log.output)] == ["chunk 1", "chunk 2"]
    text_log = RUN.invoke(app, ["history", root, "log"]).output.splitlines()
    assert text_log[1].startswith("   1  ") and text_log[1].endswith("chunk 2")

    show = RUN.invoke(app, ["history", root, "show", "0", "--path", "a.md"])
    assert show.output == _doc("a", "first")
    listing = RUN.invoke(app, ["history", root, "show", "1"]).output
    assert "/memories/b.md" in listing

    diff = RUN.invoke(app, ["history", root, "diff", "0", "1"])
    assert "A  /memories/b.md" in diff.output and "M  /memories/a.md" in diff.output
    assert "+second" in diff.output
    stat = RUN.invoke(app, ["history", root, "diff", "0", "--stat"])
    assert "+second" not in stat.output

    verify = RUN.invoke(app, ["history", root, "verify"])
    assert verify.exit_code == 0 and verify.stdout == "2 steps checked, 0 mismatches\n"
    assert verify.stderr.splitlines()[-1].startswith("history verify: step 2/2 · ")

    dest = tmp_path / "past"
    assert RUN.invoke(app, ["history", root, "checkout", "0", str(dest)]).exit_code == 0
    assert (dest / "a.md").read_text() == _doc("a", "first")
    assert not (dest / "b.md").exists()

    table = RUN.invoke(app, ["history", root, "table", "--csv"])
    assert table.stderr.splitlines()[-1].startswith("history table: step 2/2 · ")
    rows = table.stdout.strip().splitlines()
    assert rows[0].startswith("step,message,files") and rows[2].startswith("1,chunk 2,2,")


def test_errors_exit_two(store: Store) -> None:
    root = str(store.root)
    app = _app()
    assert RUN.invoke(app, ["history", root, "log"]).exit_code == 2
    RUN.invoke(app, ["history", root, "init"])
    bad = RUN.invoke(app, ["history", root, "show", "5"])
    assert bad.exit_code == 2 and "no steps yet" in bad.output


def test_negative_steps_count_back_from_the_last(store: Store, tmp_path: Path) -> None:
    root = str(store.root)
    app = _app()
    assert RUN.invoke(app, ["history", root, "init"]).exit_code == 0
    store.create("/memories/a.md", _doc("a", "first"))
    assert RUN.invoke(app, ["history", root, "snapshot", "--message", "one"]).exit_code == 0
    store.create("/memories/b.md", _doc("b", "second"))
    assert RUN.invoke(app, ["history", root, "snapshot", "--message", "two"]).exit_code == 0
    last = RUN.invoke(app, ["history", root, "show", "-1"])
    assert last.exit_code == 0, last.output
    assert "/memories/b.md" in last.output
    text = RUN.invoke(app, ["history", root, "show", "-2", "--path", "a.md"])
    assert text.exit_code == 0 and "first" in text.output, text.output
    change = RUN.invoke(app, ["history", root, "diff", "-2", "-1", "--stat"])
    assert change.exit_code == 0 and "A  /memories/b.md" in change.output, change.output
    dest = tmp_path / "back"
    assert RUN.invoke(app, ["history", root, "checkout", "-2", str(dest)]).exit_code == 0
    assert (dest / "a.md").exists() and not (dest / "b.md").exists()
    # An unknown option is still refused as one.
    wrong = RUN.invoke(app, ["history", root, "diff", "0", "-1", "--bogus"])
    assert wrong.exit_code == 2 and "No such option: --bogus" in wrong.output


def test_show_lists_byte_sizes_and_prints_any_file(store: Store) -> None:
    # A file bash left with bytes that are not UTF-8: show raised UnicodeDecodeError.
    root = str(store.root)
    app = _app()
    store.create("/memories/a.md", _doc("a", "é"))
    (store.root / "bin.md").write_bytes(b"\xff\xfe\x00\n")
    assert RUN.invoke(app, ["history", root, "snapshot", "--message", "one"]).exit_code == 0
    listing = RUN.invoke(app, ["history", root, "show", "0"])
    assert listing.exit_code == 0
    sizes = {line.split()[1]: int(line.split()[0]) for line in listing.output.splitlines()}
    assert sizes == {"/memories/a.md": len(_doc("a", "é").encode()), "/memories/bin.md": 4}
    shown = RUN.invoke(app, ["history", root, "show", "0", "--path", "bin.md"])
    assert shown.exit_code == 0 and shown.output == "\ufffd\ufffd\x00\n"
