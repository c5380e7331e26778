"""Hardening of the store: races, special files, odd names, bombs, deep trees, durability."""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from memdir.store import (
    MAX_NODES,
    NamePolicy,
    NotFoundError,
    PathError,
    Store,
    StoreError,
    lint_store,
    parse_file,
)
from memdir.store._paths import os_error
from memdir.tools import ToolError, ToolSet
from memdir.tools._anthropic_profile import AnthropicMemoryCommands
from memdir.tools._memory import read_set, write_set

DOC = "---\nname: {name}\ndescription: {name} notes\n---\n# Notes\nbody\n"
SECRET = "HOSTSECRET-0b7e"

_SWAPPER = """
import os, sys, time
people, host, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
aside = people + "-aside"
for _ in range(count):
    try:
        os.rename(people, aside)
        os.symlink(host, people)
        time.sleep(0.0003)
        os.unlink(people)
        os.rename(aside, people)
        time.sleep(0.0003)
    except OSError:
        pass
if os.path.islink(people):
    os.unlink(people)
if os.path.isdir(aside) and not os.path.exists(people):
    os.rename(aside, people)
"""


def _state(folder: Path) -> dict[str, bytes | None]:
    found: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames:
            found[os.path.join(dirpath, name)] = None
        for name in filenames:
            found[os.path.join(dirpath, name)] = Path(dirpath, name).read_bytes()
    return found


def _tools(store: Store) -> ToolSet:
    return ToolSet("all", [*write_set(store).tools.values(), read_set(store).tools["toc"]])


async def test_a_racing_swapper_never_gets_a_tool_outside_the_store(store: Store,
                                                                  tmp_path: Path) -> None:
    host = tmp_path / "host"
    (host / "sub").mkdir(parents=True)
    for name in ("alice", "bob", "sub/x"):
        (host / f"{name}.md").write_text(DOC.format(name=name.split("/")[-1]) + SECRET)
    before = _state(host)
    people = store.root / "people"
    for name in ("alice", "bob", "sub/x"):
        store.write(f"/memories/people/{name}.md", DOC.format(name=name.split("/")[-1]))
    tools = _tools(store)
    calls: list[tuple[str, dict[str, object]]] = []
    for i in range(40):
        calls += [
            ("view", {"path": "/memories/people/alice.md"}),
            ("view", {"path": "/memories/people"}),
            ("create", {"path": f"/memories/people/n{i}.md",
                        "file_text": DOC.format(name=f"n{i}")}),
            ("insert", {"path": "/memories/people/alice.md", "insert_line": 6,
                        "insert_text": "more"}),
            ("delete", {"path": f"/memories/people/n{i}.md"}),
            ("delete", {"path": "/memories/people/sub"}),
            ("rename", {"old_path": "/memories/people/bob.md", "new_path": "/memories/bob.md"}),
            ("rename", {"old_path": "/memories/bob.md", "new_path": "/memories/people/bob.md"}),
            ("grep", {"pattern": "HOSTSECRET", "path": "/memories"}),
            ("toc", {"path": "/memories/people/alice.md"}),
        ]
    swapper = subprocess.Popen([sys.executable, "-c", _SWAPPER, str(people), str(host), "4000"])
    escapes = []
    try:
        for name, args in calls:
            result = await tools.call(name, args)
            if SECRET in result.content or _state(host) != before:
                escapes.append((name, args, result.content))
    finally:
        swapper.kill()
        swapper.wait()
    assert escapes == []
    assert _state(host) == before


def _anthropic_calls(i: int) -> list[tuple[str, dict[str, object]]]:
    return [
        ("view", {"path": "/memories/people/alice.md"}),
        ("view", {"path": "/memories/people"}),
        ("create", {"path": f"/memories/people/n{i}.txt", "file_text": "x"}),
        ("str_replace", {"path": "/memories/people/alice.md", "old_str": "# Notes",
                         "new_str": "# Notes"}),
        ("insert", {"path": "/memories/people/alice.md", "insert_line": 5, "insert_text": "y"}),
        ("delete", {"path": f"/memories/people/n{i}.txt"}),
        ("create", {"path": f"/memories/people/sub/deep/x{i}", "file_text": "x"}),
        ("rename", {"old_path": "/memories/people/sub", "new_path": "/memories/moved"}),
        ("rename", {"old_path": "/memories/moved", "new_path": "/memories/people/sub"}),
        ("delete", {"path": "/memories/people/sub"}),
        ("rename", {"old_path": "/memories/people/bob.md", "new_path": "/memories/bob.txt"}),
        ("rename", {"old_path": "/memories/bob.txt", "new_path": "/memories/people/bob.md"}),
    ]


async def test_a_racing_swapper_never_gets_an_anthropic_command_outside_the_store(
        store: Store, tmp_path: Path) -> None:
    host = tmp_path / "host"
    (host / "sub").mkdir(parents=True)
    for name in ("alice", "bob", "sub/x"):
        (host / f"{name}.md").write_text(DOC.format(name=name.split("/")[-1]) + SECRET)
    before = _state(host)
    for name in ("alice", "bob"):
        store.write(f"/memories/people/{name}.md", DOC.format(name=name))
    commands = AnthropicMemoryCommands(store)
    swapper = subprocess.Popen([sys.executable, "-c", _SWAPPER, str(store.root / "people"),
                                str(host), "4000"])
    escapes, done = [], Counter[str]()
    try:
        for i in range(30):
            for name, args in _anthropic_calls(i):
                try:
                    text = await getattr(commands, name)(**args)
                    done[f"{name} ok"] += 1
                except ToolError as exc:
                    text = str(exc)
                if SECRET in text or _state(host) != before:
                    escapes.append((name, args, text))
    finally:
        swapper.kill()
        swapper.wait()
    assert escapes == []
    assert _state(host) == before
    assert sum(done.values()) > 0  # the commands also got through between swaps


@pytest.mark.parametrize("command", ["create", "str_replace", "insert", "delete", "rename",
                                     "rename into"])
def test_an_anthropic_command_waiting_for_the_lock_is_not_redirected_by_a_swap(
        store: Store, tmp_path: Path, command: str) -> None:
    """The folder is swapped for a link while the command waits for the lock (held by,
    say, a shell call), i.e. after its path was checked: the act must still stay inside."""
    host = tmp_path / "host"
    (host / "sub").mkdir(parents=True)
    (host / "alice.md").write_text("# Notes\n" + SECRET + "\n")
    (host / "sub" / "x.md").write_text(SECRET)
    before = _state(host)
    store.write("/memories/people/alice.md", DOC.format(name="alice"))
    store.write("/memories/people/sub/x.md", DOC.format(name="x"))
    commands = AnthropicMemoryCommands(store)
    call = {
        "create": lambda: commands.create("/memories/people/new.txt", "x"),
        "str_replace": lambda: commands.str_replace("/memories/people/alice.md", "# Notes", "#"),
        "insert": lambda: commands.insert("/memories/people/alice.md", 0, "x"),
        "delete": lambda: commands.delete("/memories/people/sub"),
        "rename": lambda: commands.rename("/memories/people/sub", "/memories/moved"),
        "rename into": lambda: commands.rename("/memories/moved.md", "/memories/people/m.md"),
    }[command]
    store.write("/memories/moved.md", DOC.format(name="moved"))
    holder = Store(store.root)
    outcome: list[str] = []

    def act() -> None:
        try:
            outcome.append(asyncio.run(call()))
        except ToolError as exc:
            outcome.append(f"refused: {exc}")

    with holder.locked():
        worker = threading.Thread(target=act)
        worker.start()
        time.sleep(0.3)  # the command has checked its path and waits for the lock
        people = store.root / "people"
        people.rename(store.root / "people-aside")
        people.symlink_to(host)
    worker.join(30)
    assert outcome and outcome[0].startswith("refused") and "symbolic link" in outcome[0]
    assert SECRET not in outcome[0]
    assert _state(host) == before


def test_every_act_refuses_a_folder_swapped_for_a_link(store: Store, tmp_path: Path) -> None:
    host = tmp_path / "host"
    host.mkdir()
    (host / "a.md").write_text(DOC.format(name="a") + SECRET)
    (store.root / "people").symlink_to(host)
    before = _state(host)
    acts = [
        lambda: store.read("/memories/people/a.md"),
        lambda: store.write("/memories/people/b.md", DOC.format(name="b")),
        lambda: store.delete("/memories/people/a.md"),
        lambda: store.delete("/memories/people"),  # the link itself goes, never the host folder
        lambda: store.walk("/memories/people"),
    ]
    for act in acts[:3] + acts[4:]:
        with pytest.raises(PathError, match="symbolic link"):
            act()
    assert store.kind("/memories/people") == "other"
    acts[3]()
    assert not (store.root / "people").exists() and _state(host) == before
    (store.root / "people").symlink_to(host)
    with pytest.raises(PathError, match="link or special file"):
        store.rename("/memories/people", "/memories/moved")
    store.write("/memories/x.md", DOC.format(name="x"))
    with pytest.raises(PathError, match="symbolic link"):
        store.rename("/memories/x.md", "/memories/people/x.md")
    assert _state(host) == before


def test_a_fifo_and_a_socket_named_md_are_never_opened(store: Store) -> None:
    os.mkfifo(store.root / "pipe.md")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(store.root / "sock.md"))
        started = time.monotonic()
        for path in ("/memories/pipe.md", "/memories/sock.md"):
            with pytest.raises(PathError, match="not a regular file|link or special"):
                store.read(path)
            with pytest.raises(PathError):
                store.write(path, DOC.format(name="pipe"))
        assert store.walk() == []  # listed as nothing: neither is a memory file
        findings = {f.path for f in lint_store(store)}
        assert {"/memories/pipe.md", "/memories/sock.md"} <= findings
        store.delete("/memories/pipe.md")
        assert time.monotonic() - started < 5
    assert not (store.root / "pipe.md").exists()


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/memories/" + "é" * 130 + ".md", "longer than 255 bytes"),
        ("/memories/\udc80.md", "lone surrogate"),
        ("/memories/a.md/x.md", "is a file, so it cannot hold"),
    ],
)
def test_odd_paths_are_store_errors(store: Store, path: str, code: str) -> None:
    store.write("/memories/a.md", DOC.format(name="a"))
    for act in (lambda: store.read(path), lambda: store.write(path, DOC.format(name="x")),
                lambda: store.delete(path)):
        with pytest.raises(StoreError, match=code):
            act()


@pytest.mark.parametrize(
    "code",
    [errno.ENAMETOOLONG, errno.ELOOP, errno.ENOTDIR, errno.EINVAL, errno.EEXIST, errno.ENOSPC,
     errno.EACCES, errno.EIO, errno.EMFILE],
)
def test_every_os_error_becomes_a_message_without_host_paths(code: int) -> None:
    exc = OSError(code, os.strerror(code), "/very/secret/host/path")
    error = os_error(exc, "/memories/a.md")
    assert isinstance(error, StoreError)
    assert "/memories/a.md" in str(error) and "/very/secret" not in str(error)


async def test_the_os_error_corpus_comes_back_as_tool_errors(store: Store) -> None:
    tools = write_set(store)
    store.write("/memories/a.md", DOC.format(name="a"))
    (store.root / "loop.md").symlink_to("loop.md")
    long = "é" * 130
    cases = [
        ("view", {"path": f"/memories/{long}.md"}),
        ("create", {"path": f"/memories/{long}/x.md", "file_text": DOC.format(name="x")}),
        ("view", {"path": "/memories/loop.md"}),
        ("str_replace", {"path": "/memories/loop.md", "old_str": "a", "new_str": "b"}),
        ("create", {"path": "/memories/a.md/x.md", "file_text": DOC.format(name="x")}),
        ("view", {"path": "/memories/a.md/x.md"}),
        ("rename", {"old_path": "/memories/a.md", "new_path": "/memories/a.md/b.md"}),
        ("create", {"path": "/memories/\udc80.md", "file_text": DOC.format(name="x")}),
        ("create", {"path": "/memories/b.md", "file_text": DOC.format(name="b") + "\udc80"}),
        ("create", {"path": "/memories/a.md", "file_text": DOC.format(name="a")}),
        ("rename", {"old_path": "/memories/a.md", "new_path": "/memories/a.md"}),
    ]
    for name, args in cases:
        result = await tools.call(name, args)
        assert result.is_error, (name, args, result.content)
        assert str(store.root) not in result.content


def test_a_lock_not_acquired_in_time_is_a_store_error(tmp_path: Path) -> None:
    holder = Store(tmp_path / "s", create=True)
    waiter = Store(tmp_path / "s", lock_timeout=0.2)
    code = (
        "import sys, time\n"
        "from filelock import FileLock\n"
        "with FileLock(sys.argv[1]):\n"
        "    print('held', flush=True)\n"
        "    time.sleep(30)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(holder.root / ".memdir" / "lock")],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(StoreError, match="busy"):
            waiter.write("/memories/a.md", DOC.format(name="a"))
    finally:
        proc.kill()
        proc.wait()


def test_a_tree_a_thousand_folders_deep_works_everywhere(
    store: Store, deep_tree: Callable[..., str]
) -> None:
    deep_tree(store.root, 1000, "deep.md", DOC.format(name="deep"))
    try:
        assert store.files()[-1].endswith("/deep.md")
        assert len(store.walk()) == 1001
        assert lint_store(store) == []
    finally:
        store.delete("/memories/d")  # pytest's own clean-up of old temp folders recurses
    assert store.walk() == []


def test_grep_finds_a_file_a_thousand_folders_deep(
    store: Store, deep_tree: Callable[..., str]
) -> None:
    from memdir.tools._grep import grep_store

    path = deep_tree(store.root, 1000, "deep.md", DOC.format(name="deep"))
    try:
        assert [h.path for h in grep_store(store, "Notes")] == [path]
    finally:
        store.delete("/memories/d")  # pytest's own clean-up of old temp folders recurses


def test_yaml_bombs_are_refused_in_bounded_time_and_memory(store: Store) -> None:
    laughs = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        laughs.append(f"{chr(ord('a') + i)}: &{chr(ord('a') + i)} [*{prev}, *{prev}, *{prev}, "
                      f"*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]")
    bomb = "---\nname: bomb\n" + "\n".join(laughs) + "\ndescription: *i\n---\nbody\n"
    nested = "---\nname: deep\ndescription: " + "[" * 10_000 + "\n---\nbody\n"
    assert len(bomb) < 1000
    tracemalloc.start()
    for name, text in (("bomb", bomb), ("deep", nested)):
        parsed = parse_file(text, name)
        assert parsed.frontmatter is None
        assert parsed.defects[0].code == "invalid-yaml"
        (store.root / f"{name}.md").write_text(text)
    listing = store.walk()
    assert [e.description for e in listing] == [None, None]
    codes = {f.code for f in lint_store(store)}
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert codes == {"invalid-yaml"}
    assert peak < 20 * 1024 * 1024
    assert f"{MAX_NODES:,}" in parse_file(bomb).defects[0].message


def test_long_descriptions_are_cut_in_listings(store: Store) -> None:
    store.write("/memories/a.md", "---\nname: a\ndescription: " + "x" * 5000 + "\n---\n")
    (entry,) = store.walk()
    assert entry.description is not None and len(entry.description) < 220
    assert entry.description.endswith("[...]")


def test_stale_temp_files_are_swept_when_a_store_opens_and_lint_ignores_them(
    store: Store,
) -> None:
    store.write("/memories/people/a.md", DOC.format(name="a"))
    stale = store.root / "people" / ".tmp-deadbeef.part"
    stale.write_bytes(b"half a write")
    assert lint_store(store) == []
    Store(store.root)
    assert not stale.exists()
    assert (store.root / "people" / "a.md").exists()


def test_rename_with_its_name_edit_is_one_step_even_on_a_full_disk(store: Store) -> None:
    # The moved file must grow (a longer name:), and the file size limit stands in
    # for a full disk: the edited text cannot be written, so nothing may move.
    store.write("/memories/a.md", DOC.format(name="a"))
    code = (
        "import asyncio, resource, signal, sys\n"
        "from memdir.store import Store\n"
        "from memdir.tools._memory import write_set\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (40, resource.RLIM_INFINITY))\n"
        "tools = write_set(Store(sys.argv[1]))\n"
        "r = asyncio.run(tools.call('rename', {'old_path': '/memories/a.md',\n"
        "    'new_path': '/memories/a-much-longer-name.md'}))\n"
        "print(r.is_error, r.content)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(store.root)], capture_output=True,
                          text=True, check=True)
    assert done.stdout.startswith("True"), done.stdout
    assert store.files() == ["/memories/a.md"]
    assert store.read("/memories/a.md") == DOC.format(name="a")
    assert not [p for p in store.root.iterdir() if p.name.startswith(".tmp-")]


async def test_rename_result_is_true_and_the_name_follows(store: Store) -> None:
    store.write("/memories/a.md", DOC.format(name="a"))
    result = await write_set(store).call("rename", {"old_path": "/memories/a.md",
                                                     "new_path": "/memories/x/b.md"})
    assert not result.is_error
    assert store.read("/memories/x/b.md") == DOC.format(name="a").replace("name: a", "name: b")
    with pytest.raises(NotFoundError):
        store.read("/memories/a.md")


def test_make_plain_removes_links_and_specials_and_clears_setuid(store: Store,
                                                                 tmp_path: Path) -> None:
    store.write("/memories/a.md", DOC.format(name="a"))
    os.chmod(store.root / "a.md", 0o4755)
    (store.root / "sub").mkdir()
    os.chmod(store.root / "sub", 0o2777)
    (store.root / "sub" / "link.md").symlink_to(tmp_path)
    os.mkfifo(store.root / "sub" / "pipe.md")
    done = dict(store.make_plain())
    assert set(done) == {"/memories/a.md", "/memories/sub", "/memories/sub/link.md",
                         "/memories/sub/pipe.md"}
    assert (store.root / "a.md").stat().st_mode & 0o7777 == 0o644
    assert (store.root / "sub").stat().st_mode & 0o7000 == 0
    assert sorted(p.name for p in (store.root / "sub").iterdir()) == []
    assert tmp_path.is_dir()
    assert store.make_plain() == []


def test_a_name_policy_can_admit_other_text_files(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True, names=NamePolicy(None, "text file"))
    store.write("/memories/notes.txt", "plain text, no header")
    assert store.files() == ["/memories/notes.txt"]
    assert store.read("/memories/notes.txt") == "plain text, no header"
    with pytest.raises(PathError, match="outside the memory store"):
        store.write("/etc/x.txt", "no")


def test_sigkilled_writers_leave_no_temp_files_after_reopen(store: Store) -> None:
    code = (
        "import sys\n"
        "from memdir.store import Store\n"
        "s = Store(sys.argv[1])\n"
        "i = 0\n"
        "while True:\n"
        "    i += 1\n"
        "    s.write('/memories/a.md', '---\\nname: a\\ndescription: a\\n---\\n' + 'x' * 200000)\n"
    )
    for _ in range(5):
        proc = subprocess.Popen([sys.executable, "-c", code, str(store.root)])
        deadline = time.monotonic() + 120  # a loaded machine may take seconds to import
        while not (store.root / "a.md").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)  # kill it in the middle of later writes
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    reopened = Store(store.root)
    assert not [p for p in reopened.root.iterdir() if p.name.startswith(".tmp-")]
    assert reopened.files() == ["/memories/a.md"]
    assert parse_file(reopened.read("/memories/a.md"), "a").defects == []


def test_a_snapshot_restores_hidden_files_and_drops_what_was_planted(store: Store,
                                                                     tmp_path: Path) -> None:
    from memdir.agents import restore, snapshot

    store.write("/memories/a.md", DOC.format(name="a"))
    (store.root / "empty").mkdir()
    (store.root / "people").mkdir()
    (store.root / "people" / ".hidden").write_text("kept")
    snap = snapshot(store)
    store.delete("/memories/a.md")
    (store.root / "people" / "link.md").symlink_to(tmp_path)
    os.mkfifo(store.root / "pipe.md")
    store.write("/memories/new/b.md", DOC.format(name="b"))
    restore(store, snap)
    assert snapshot(store) == snap
    assert sorted(p.name for p in store.root.iterdir()) == [".memdir", "a.md", "empty", "people"]
    assert tmp_path.is_dir()


def test_a_reading_open_leaves_the_sweep_to_its_first_write(store: Store) -> None:
    store.write("/memories/people/a.md", DOC.format(name="a"))
    stale = store.root / "people" / ".tmp-deadbeef.part"
    stale.write_bytes(b"half a write")
    reader = Store(store.root, sweep_now=False)
    assert stale.exists()  # no walk of the tree on a reading open...
    assert reader.files() == ["/memories/people/a.md"]  # ...and reads never show it
    reader.write("/memories/people/b.md", DOC.format(name="b"))
    assert not stale.exists()  # the first write swept it, under the lock
    assert reader.files() == ["/memories/people/a.md", "/memories/people/b.md"]


def test_importing_the_store_leaves_pydantic_unloaded() -> None:
    code = (
        "import sys\nimport memdir.store\n"
        "print('pydantic' in sys.modules)\n"
        "from memdir.store import Frontmatter, SkillMetadata, parse_file\n"
        "print(parse_file('---\\nname: a\\ndescription: b\\n---\\nx\\n', 'a').frontmatter)\n"
        "print(Frontmatter.__name__, SkillMetadata.__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.splitlines() == [
        "False", "name='a' description='b' metadata=None", "Frontmatter SkillMetadata"]


@pytest.mark.parametrize("kind", ["link-to-folder", "dangling-link", "file"])
def test_a_state_folder_that_is_not_a_folder_is_refused(tmp_path: Path, kind: str) -> None:
    # .memdir holds the lock and the saved search index; followed, a link planted there
    # (an outside program, a clone) had both written wherever it pointed.
    root = tmp_path / "memories"
    root.mkdir()
    (root / "a.md").write_text("---\nname: a\ndescription: d\n---\napple\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if kind == "link-to-folder":
        os.symlink(elsewhere, root / ".memdir")
    elif kind == "dangling-link":
        os.symlink(tmp_path / "nowhere", root / ".memdir")
    else:
        (root / ".memdir").write_text("not a folder")
    with pytest.raises(StoreError, match=r"\.memdir is not a folder memdir made.*Remove it"):
        Store(root)
    assert list(elsewhere.iterdir()) == []
    assert not (tmp_path / "nowhere").exists()
