"""Path safety: every agent path either lands under the store root or is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.store import PathError, Store, StorePath, resolve


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    (folder / "people").mkdir(parents=True)
    (folder / "people" / "alice.md").write_text("---\nname: alice\ndescription: a\n---\n")
    return folder


@pytest.mark.parametrize(
    "path",
    [
        "../secret.md",
        "/memories/../secret.md",
        "/memories/people/../../secret.md",
        "people/../../x.md",
        "/memories/a/..",
        "..",
    ],
)
def test_dotdot_is_refused(root: Path, path: str) -> None:
    with pytest.raises(PathError, match=r"'\.\.'"):
        resolve(root, path)


@pytest.mark.parametrize(
    "path",
    ["/memories/%2e%2e/x.md", "/memories/%2E%2E%2Fx.md", "/memories/\uff0e\uff0e/x.md"],
)
def test_encoded_dots_are_plain_names_inside_the_root(root: Path, path: str) -> None:
    # memdir never URL-decodes: an encoded '..' is a literal, harmless folder name.
    target = resolve(root, path)
    assert root.resolve() in target.host.parents


@pytest.mark.parametrize("path", ["/etc/passwd", "/tmp/x.md", "/memoriesx/a.md", "/", "//x.md"])
def test_absolute_host_paths_are_refused(root: Path, path: str) -> None:
    with pytest.raises(PathError, match="outside the memory store"):
        resolve(root, path)


def test_backslashes_are_refused(root: Path) -> None:
    with pytest.raises(PathError, match="forward slashes"):
        resolve(root, "/memories\\..\\x.md")


@pytest.mark.parametrize("bad", ["\x00", "\n", "\r", "\t", "\x1b", "\x7f"])
def test_nul_and_control_characters_are_refused(root: Path, bad: str) -> None:
    with pytest.raises(PathError, match="control character"):
        resolve(root, f"/memories/a{bad}b.md")


@pytest.mark.parametrize("path", ["", "   "])
def test_empty_path_is_refused(root: Path, path: str) -> None:
    with pytest.raises(PathError, match="empty"):
        resolve(root, path)


def test_overlong_paths_are_refused(root: Path) -> None:
    with pytest.raises(PathError, match="longer than"):
        resolve(root, "/memories/" + "a/" * 2100 + "x.md")
    with pytest.raises(PathError, match="longer than 255"):
        resolve(root, "/memories/" + "a" * 300 + ".md")


@pytest.mark.parametrize("path", ["/memories/notes.txt", "/memories/a/b.py", "/memories/x.md.bak"])
def test_non_markdown_files_are_refused(root: Path, path: str) -> None:
    with pytest.raises(PathError, match="not a markdown file"):
        resolve(root, path)


def test_kind_file_and_dir(root: Path) -> None:
    with pytest.raises(PathError, match="try /memories/people.md"):
        resolve(root, "/memories/people", "file")
    with pytest.raises(PathError, match="root folder"):
        resolve(root, "/memories", "file")
    with pytest.raises(PathError, match="folder is needed"):
        resolve(root, "/memories/people/alice.md", "dir")
    assert resolve(root, "/memories/people", "dir").virtual == "/memories/people"


@pytest.mark.parametrize(
    "path", ["/memories/.git/config.md", "/memories/.memdir/x.md", "/memories/a/.hidden.md"]
)
def test_hidden_components_are_refused(root: Path, path: str) -> None:
    with pytest.raises(PathError, match="hidden component"):
        resolve(root, path)


@pytest.mark.parametrize(
    ("path", "virtual"),
    [
        ("/memories", "/memories"),
        ("/memories/", "/memories"),
        ("/memories//people/./alice.md", "/memories/people/alice.md"),
        ("people/alice.md", "/memories/people/alice.md"),
        ("memories/people/alice.md", "/memories/people/alice.md"),
        ("memories", "/memories"),
    ],
)
def test_normal_forms(root: Path, path: str, virtual: str) -> None:
    target = resolve(root, path)
    assert target.virtual == virtual
    assert target.host == root.resolve().joinpath(*virtual.split("/")[2:])


def test_file_symlink_escaping_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret")
    (root / "leak.md").symlink_to(outside)
    with pytest.raises(PathError, match="symbolic link"):
        resolve(root, "/memories/leak.md")
    store = Store(root)
    with pytest.raises(PathError):
        store.read("/memories/leak.md")
    with pytest.raises(PathError):
        store.write("/memories/leak.md", "overwritten")
    assert outside.read_text() == "secret"


def test_folder_symlink_escaping_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.md").write_text("secret")
    (root / "door").symlink_to(outside, target_is_directory=True)
    for path in ("/memories/door", "/memories/door/x.md", "/memories/door/new/y.md"):
        with pytest.raises(PathError, match="symbolic link"):
            resolve(root, path)
    store = Store(root)
    with pytest.raises(PathError):
        store.write("/memories/door/y.md", "x")
    assert sorted(p.name for p in outside.iterdir()) == ["x.md"]
    # Listings never follow the link either.
    assert all(not p.startswith("/memories/door") for p in store.files())


def test_dangling_symlink_pointing_outside_is_refused(root: Path, tmp_path: Path) -> None:
    (root / "ghost.md").symlink_to(tmp_path / "does-not-exist.md")
    with pytest.raises(PathError, match="symbolic link"):
        Store(root).write("/memories/ghost.md", "x")
    assert not (tmp_path / "does-not-exist.md").exists()


def test_symlink_inside_the_root_is_allowed(root: Path) -> None:
    (root / "alias").symlink_to(root / "people", target_is_directory=True)
    target = resolve(root, "/memories/alias/alice.md")
    assert Path(os.path.realpath(target.host)) == (root / "people" / "alice.md").resolve()


def test_delete_of_inner_symlink_removes_only_the_link(root: Path) -> None:
    (root / "alias").symlink_to(root / "people", target_is_directory=True)
    Store(root).delete("/memories/alias")
    assert not (root / "alias").exists()
    assert (root / "people" / "alice.md").is_file()


_PIECES = st.sampled_from(
    [
        "..", ".", "", "a", "b.md", "people", "alice.md", "door", "leak.md", "memories",
        "/memories", "%2e%2e", "...", ".git", "\x00", "\\", "~", "a b", "\u00e9.md",
        "/", "//", "C:", "\uff0e\uff0e",
    ]
)
_PATHS = st.one_of(
    st.text(max_size=60),
    st.lists(_PIECES, max_size=8).map("/".join),
    st.lists(_PIECES, max_size=8).map(lambda p: "/memories/" + "/".join(p)),
)


@pytest.fixture(scope="module")
def trap_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("trap")
    root = base / "root"
    (root / "people").mkdir(parents=True)
    (root / "people" / "alice.md").write_text("x")
    (base / "outside").mkdir()
    (root / "door").symlink_to(base / "outside", target_is_directory=True)
    (root / "leak.md").symlink_to(base / "outside" / "s.md")
    (root / "people" / "up").symlink_to(base, target_is_directory=True)
    return root


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(path=_PATHS)
def test_no_path_ever_resolves_outside_the_root(trap_root: Path, path: str) -> None:
    real_root = Path(os.path.realpath(trap_root))
    for kind in ("any", "file", "dir"):
        try:
            target = resolve(trap_root, path, kind)  # type: ignore[arg-type]
        except PathError:
            continue
        assert isinstance(target, StorePath)
        real = Path(os.path.realpath(target.host))
        assert real == real_root or real_root in real.parents
        assert target.virtual == "/memories" or target.virtual.startswith("/memories/")


def test_a_path_that_changes_while_it_is_checked_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # os.path.realpath lstat()s a link, then readlink()s it; a swapper that removes
    # the link in between (the racing-swapper test hits this) makes realpath raise.
    # resolve must refuse the path, not crash the tool call.
    root = tmp_path / "root"
    root.mkdir()
    (root / "people").symlink_to(tmp_path)

    def vanished(path: object, *args: object, **kwargs: object) -> str:
        raise FileNotFoundError(2, "No such file or directory", str(path))

    monkeypatch.setattr(os, "readlink", vanished)
    with pytest.raises(PathError, match="changed while it was being checked"):
        resolve(root, "/memories/people/a.md")
