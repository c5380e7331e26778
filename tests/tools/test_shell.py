"""The Shell harness: real bash in a real sandbox over a real store.

Every confined test runs once per confinement that works on this machine and
skips (with the reason) where none does. Commands that try to escape are only
ever run inside a confinement, never unconfined.
"""

from __future__ import annotations

import re
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.store import Store
from memdir.tools import bm25_set, make_toolset
from memdir.tools._sandbox import Backend, available_backends
from memdir.tools._shell import SandboxUnavailableError, shell_set
from memdir.tools._spec import ToolSet

WORKING = available_backends()


def _md(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: About {name}\n---\n{body}\n"


@pytest.fixture
def shell(backend: Backend, store: Store) -> ToolSet:
    store.write("/memories/people/alice.md", _md("alice", "Alice likes tea."))
    return shell_set(store, timeout=1.0, output_chars=1000, backend=backend)


async def _run(tools: ToolSet, command: str) -> str:
    result = await tools.call("bash", {"command": command})
    assert not result.is_error, result.content
    return result.content


async def test_edits_reach_the_store_and_are_reported(shell: ToolSet, store: Store) -> None:
    out = await _run(shell, "sed -i 's/tea/coffee/' /memories/people/alice.md && pwd")
    assert out.startswith("/memories\n")
    assert "[exit status 0]" in out
    assert "Store changes: modified: /memories/people/alice.md." in out
    assert "Store check: no new problems." in out
    assert "Alice likes coffee." in store.read("/memories/people/alice.md")


async def test_changes_are_reported_to_the_store_so_search_sees_them(
    shell: ToolSet, store: Store
) -> None:
    search = bm25_set(store)
    assert (await search.call("search", {"query": "oboe"})).content.startswith("No file")
    before = store.generation
    await _run(shell, "grep -c tea /memories/people/alice.md")
    assert store.generation == before  # reading is not a change
    await _run(shell, "echo 'Alice also plays the oboe.' >> /memories/people/alice.md")
    assert store.generation > before
    found = await search.call("search", {"query": "oboe"})
    assert "1. /memories/people/alice.md" in found.content


async def test_reading_changes_nothing_and_reports_nothing(shell: ToolSet) -> None:
    out = await _run(shell, "grep -rn tea /memories")
    assert out == "/memories/people/alice.md:5:Alice likes tea.\n[exit status 0]"


async def test_exit_status_and_stderr_are_shown(shell: ToolSet) -> None:
    out = await _run(shell, "cat /memories/nope.md")
    assert "No such file or directory" in out
    assert "[exit status 1]" in out


async def test_time_limit_kills_the_command_and_what_it_started(
    shell: ToolSet, store: Store
) -> None:
    started = time.monotonic()
    out = await _run(shell, "(sleep 1.5; echo late > /memories/late.md) & sleep 30")
    assert time.monotonic() - started < 4
    assert "[stopped: the command ran past the 1 s time limit" in out
    time.sleep(1.0)
    assert not (store.root / "late.md").exists()


async def test_background_jobs_do_not_outlive_the_call(shell: ToolSet, store: Store) -> None:
    out = await _run(shell, "(sleep 0.5; echo late > /memories/late.md) & echo started")
    assert out.startswith("started\n[exit status 0]")
    time.sleep(1.0)
    assert not (store.root / "late.md").exists()


async def test_huge_output_is_cut_with_a_note(shell: ToolSet) -> None:
    out = await _run(shell, "yes 0123456789 | head -c 3000000")
    assert "[output cut: the command printed 3,000,000 bytes; only the first 1,000" in out
    assert len(out) < 1500


async def test_no_network(shell: ToolSet) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        probe = (
            "python3 -c \"import socket; "
            f"socket.create_connection(('127.0.0.1', {port}), timeout=1)\""
        )
        out = await _run(shell, probe)
    assert "[exit status 0]" not in out
    assert "Error" in out  # ConnectionRefusedError or OSError: network unreachable
    devices = await _run(shell, "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")
    assert devices == "lo\n[exit status 0]"


async def test_writes_outside_the_store_do_not_reach_the_host(
    shell: ToolSet, store: Store, tmp_path: Path
) -> None:
    marker = f"memdir-escape-{uuid.uuid4().hex}"
    outside = tmp_path / "outside"
    outside.mkdir()
    command = (
        f"echo x > /tmp/{marker}; echo x > {outside}/{marker} ; "
        f"mkdir -p /root/{marker} ; touch /usr/{marker} ; ls {store.root} ; "
        "echo done"
    )
    out = await _run(shell, command)
    assert "done" in out
    assert not (Path("/tmp") / marker).exists()
    assert not (outside / marker).exists()
    assert not (Path("/root") / marker).exists()
    assert not (Path("/usr") / marker).exists()
    assert "Read-only file system" in out  # /usr is mounted read-only


async def test_store_state_folder_is_hidden(shell: ToolSet, store: Store) -> None:
    state = store.root / ".memdir"
    before = sorted(p.name for p in state.iterdir())
    out = await _run(shell, "ls -A /memories/.memdir; echo gone > /memories/.memdir/lock; echo ok")
    assert out.startswith("ok\n")
    assert sorted(p.name for p in state.iterdir()) == before
    assert "Store changes" not in out


async def test_a_text_file_is_reported_as_a_defect(shell: ToolSet) -> None:
    out = await _run(shell, "echo hello > /memories/people/notes.txt")
    assert "Store changes: created: /memories/people/notes.txt." in out
    assert "/memories/people/notes.txt: not-markdown:" in out
    assert "1 new problem(s)" in out


async def test_broken_frontmatter_links_and_hidden_files_are_reported(shell: ToolSet) -> None:
    out = await _run(
        shell,
        "printf 'no header\\n' > /memories/bare.md; ln -s /etc/passwd /memories/link.md; "
        "mkdir /memories/.x && echo y > /memories/.x/y.md",
    )
    assert "/memories/bare.md" in out and "missing-frontmatter" in out
    assert "/memories/link.md: removed a symbolic link" in out  # gone before the lock is freed
    assert "/memories/.x/y.md: hidden-file:" in out
    again = await _run(shell, "true")
    assert again == "[exit status 0]"  # defects are reported once, when they appear


async def test_dangling_reference_after_a_rename_is_reported(shell: ToolSet) -> None:
    await _run(shell, "printf -- '---\\nname: bob\\ndescription: Bob\\n---\\n"
               "see /memories/people/alice.md\\n' > /memories/bob.md")
    out = await _run(shell, "mv /memories/people/alice.md /memories/people/alicia.md")
    assert "dangling-reference" in out and "/memories/bob.md" in out


async def test_bad_calls_are_tool_errors(shell: ToolSet) -> None:
    empty = await shell.call("bash", {"command": "   "})
    assert empty.is_error and "empty" in empty.content
    missing = await shell.call("bash", {})
    assert missing.is_error


def test_the_description_states_the_limits(shell: ToolSet) -> None:
    text = shell.tools["bash"].description
    assert "1 s per command" in text and "1,000 characters" in text
    assert "/memories" in text and "no network" in text


def test_make_toolset_builds_the_shell(store: Store) -> None:
    if not WORKING:
        pytest.skip("no confinement works on this machine (install bubblewrap)")
    tools = make_toolset("shell", store)
    assert tools.name == "shell" and list(tools.tools) == ["bash"]
    assert tools.tools["bash"].destructive


def test_unconfined_needs_an_explicit_opt_in(store: Store) -> None:
    with pytest.raises(SandboxUnavailableError, match="allow_unconfined=True"):
        shell_set(store, backend="unconfined")


@pytest.fixture
def unconfined(store: Store) -> Iterator[ToolSet]:
    store.write("/memories/a.md", _md("a", "first"))
    yield shell_set(store, timeout=2.0, backend="unconfined", allow_unconfined=True)


async def test_unconfined_runs_in_the_store_root_with_relative_paths(
    unconfined: ToolSet, store: Store
) -> None:
    # Only harmless commands here: nothing protects the host in this mode.
    text = unconfined.tools["bash"].description
    assert "relative paths" in text and "no network" not in text
    out = await _run(unconfined, "pwd; sed -i 's/first/second/' a.md; echo x > b.txt")
    assert out.startswith(f"{store.root}\n")
    assert "second" in store.read("/memories/a.md")
    assert "/memories/b.txt: not-markdown:" in out


async def test_an_edit_with_size_and_mtime_put_back_is_reported_and_checked(
    shell: ToolSet, store: Store
) -> None:
    # Issue 19, item 10: the picture taken before and after a command held each file's
    # mtime and size only, so breaking a header in place and putting the mtime back
    # was neither reported nor checked.
    out = await _run(shell, "t=$(stat -c %y people/alice.md); "
                            "sed -i 's/^name: alice/nome: alice/' people/alice.md; "
                            "touch -d \"$t\" people/alice.md")
    assert "Store changes: modified: /memories/people/alice.md." in out
    assert re.search(r"Store check: \d+ new problem\(s\); fix them:\n"
                     r"- /memories/people/alice\.md", out), out


async def test_endless_output_is_stopped_before_the_time_limit(
    backend: Backend, store: Store
) -> None:
    shell = shell_set(store, timeout=30.0, output_chars=1000, backend=backend)
    started = time.monotonic()
    out = await _run(shell, "yes")
    assert "[stopped: the command printed more than 16,777,216 bytes" in out
    assert "[output cut" in out
    assert time.monotonic() - started < 25


async def test_a_swap_under_the_lock_never_reaches_the_host(
    shell: ToolSet, store: Store, tmp_path: Path
) -> None:
    # The command holds the store lock while it swaps a folder for a link to a host
    # folder; a delete and a rename from another session wait for the lock meanwhile.
    import asyncio

    host = tmp_path / "host-dir"
    (host / "sub").mkdir(parents=True)
    (host / "sub" / "keep.md").write_text(_md("keep", "host file"))
    store.write("/memories/people/sub/x.md", _md("x", "store file"))
    other = Store(store.root)

    def waiting_session() -> list[str]:
        time.sleep(0.3)  # the command has the lock by now
        outcomes = []
        for act in (lambda: other.delete("/memories/people/sub"),
                    lambda: other.rename("/memories/people/sub", "/memories/pulled"),
                    lambda: other.write("/memories/people/sub/new.md", _md("new", "x"))):
            try:
                act()
                outcomes.append("done")
            except Exception as exc:  # noqa: BLE001 - the outcome is what is checked
                outcomes.append(type(exc).__name__)
        return outcomes

    waiter = asyncio.create_task(asyncio.to_thread(waiting_session))
    out = await _run(shell, f"mv people aside; ln -s {host} people; sleep 0.6")
    outcomes = await waiter
    assert "/memories/people: removed a symbolic link" in out
    assert sorted(p.relative_to(host).as_posix() for p in host.rglob("*")) == [
        "sub", "sub/keep.md"]
    assert outcomes == ["NotFoundError", "NotFoundError", "done"]
    assert sorted(store.files()) == ["/memories/aside/alice.md", "/memories/aside/sub/x.md",
                             "/memories/people/sub/new.md"]


async def test_setuid_executables_and_fifos_do_not_survive_a_call(
    shell: ToolSet, store: Store
) -> None:
    out = await _run(shell, "cp /usr/bin/id x.md; chmod 4755 x.md; mkfifo pipe.md; "
                     "mkdir d; chmod 2777 d; python3 -c \"import socket; "
                     "socket.socket(socket.AF_UNIX).bind('d/s.md')\"")
    assert (store.root / "x.md").stat().st_mode & 0o7111 == 0
    assert not (store.root / "pipe.md").exists() and not (store.root / "d" / "s.md").exists()
    assert (store.root / "d").stat().st_mode & 0o7000 == 0
    assert "/memories/pipe.md: removed a special file" in out
    assert "/memories/x.md: cleared setuid" in out
    started = time.monotonic()
    view = await make_toolset("write", store).call("view", {"path": "/memories/pipe.md"})
    assert view.is_error and time.monotonic() - started < 5


async def test_a_repository_planted_by_a_command_is_removed(shell: ToolSet, store: Store) -> None:
    out = await _run(shell, "mkdir -p .git/hooks && echo '[core]' > .git/config")
    assert not (store.root / ".git").exists()
    assert "/memories/.git: removed a repository" in out
