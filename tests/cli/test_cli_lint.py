"""memdir lint names each finding for what it is: a link, a file over the cap, a lost target."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.cli import app
from memdir.config import get_settings
from memdir.store import Store

RUN = CliRunner()


def _lint(root: Path) -> tuple[int, list[str], dict[str, dict[str, object]]]:
    text = RUN.invoke(app, ["lint", str(root)])
    data = json.loads(RUN.invoke(app, ["lint", str(root), "--json"]).stdout)
    return text.exit_code, text.stdout.splitlines(), {
        f"{f['path']}:{f['code']}:{f['line']}": f for f in data["findings"]}


def test_a_symlink_and_a_special_file_are_named_as_such(sample_dir: Path,
                                                        tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: outside\ndescription: d\n---\nx\n")
    (sample_dir / "linked.md").symlink_to(outside)
    os.mkfifo(sample_dir / "pipe.md")
    code, lines, found = _lint(sample_dir)
    assert code == 1
    assert "/memories/linked.md:not-markdown:None" not in found
    link = found["/memories/linked.md:symlink:None"]
    assert "never follows links" in str(link["message"])
    assert "replace it with a copy" in str(link["message"])
    assert "/memories/pipe.md:special-file:None" in found
    shown = [line for line in lines if line.startswith("/memories/linked.md")]
    assert len(shown) == 1 and "symlink" in shown[0]


def test_a_file_over_the_write_cap_is_reported_with_the_cap(
        sample_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDIR_MAX_FILE_BYTES", "300")
    get_settings.cache_clear()
    try:
        sizes = {p: len(Store(sample_dir).read_bytes(p)) for p in Store(sample_dir).files()}
        code, lines, found = _lint(sample_dir)
    finally:
        get_settings.cache_clear()
    big = sorted(p for p, size in sizes.items() if size > 300)
    assert big and code == 1
    assert sorted(k.split(":")[0] for k in found if k.endswith(":too-large:None")) == big
    message = str(found[f"{big[0]}:too-large:None"]["message"])
    assert f"{sizes[big[0]]:,} bytes" in message and "300" in message and "split it" in message


def test_references_left_by_a_rename_and_a_delete_say_what_happened(sample_dir: Path) -> None:
    store = Store(sample_dir)
    (sample_dir / "ref.md").write_text(
        "---\nname: ref\ndescription: refs\n---\nSee /memories/people/maya.md and "
        "/memories/people/theo.md > ## Pottery.\nAlso /memories/gone.md.\n")
    store.rename("/memories/people/maya.md", "/memories/friends/maya.md")
    text = store.read("/memories/people/theo.md").replace("## Pottery", "## Ceramics")
    store.write("/memories/people/theo.md", text)
    lines = RUN.invoke(app, ["lint", str(sample_dir)]).stdout.splitlines()
    data = json.loads(RUN.invoke(app, ["lint", str(sample_dir), "--json"]).stdout)
    messages = [str(f["message"]) for f in data["findings"]
                if f["path"] == "/memories/ref.md" and f["code"] == "dangling-reference"]
    assert len(messages) == 3
    assert any("a file of that name is at /memories/friends/maya.md" in m for m in messages)
    assert any("no section Pottery" in m and "heading was renamed or removed" in m
               for m in messages)
    assert any("/memories/gone.md does not exist (deleted, renamed, or never written)" in m
               for m in messages)
    assert sum(1 for line in lines if line.startswith("/memories/ref.md")) == 3  # one line each
