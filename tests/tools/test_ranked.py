"""BM25 whole-file search (the ``bm25`` set) over a real store on disk."""

from __future__ import annotations

import os

import pytest

from memdir.store import Store
from memdir.tools import make_toolset
from memdir.tools._bm25index import FileIndex, index_for
from memdir.tools._ranked import bm25_set, search_spec
from memdir.tools._spec import ToolSet


def _md(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


@pytest.fixture
def filled(store: Store) -> Store:
    store.write(
        "/memories/people/alice.md",
        _md("alice", "Alice, a colleague", "# Alice\n\nWorks on compilers.\n"
            "Her birthday is in March.\n\nLikes hiking in the Alps.\n"),
    )
    store.write(
        "/memories/people/bob.md",
        _md("bob", "Bob, a neighbour", "# Bob\n\nPlays the trombone.\nHas a dog named Rex.\n"),
    )
    store.write(
        "/memories/trips/alps-2024.md",
        _md("alps-2024", "Hiking trip to the Alps in 2024",
            "# Trip\n\nWe hiked for a week.\nThe hiking was hard but fun.\n"),
    )
    store.write("/memories/misc.md", _md("misc", "Odds and ends", "Nothing here about trips.\n"))
    return store


def _search(store: Store) -> ToolSet:
    return ToolSet("t", [search_spec(store)])


async def test_search_ranks_files_and_shows_matching_lines(filled: Store) -> None:
    result = await _search(filled).call("search", {"query": "trombone dog"})
    assert not result.is_error, result.content
    assert "1. /memories/people/bob.md" in result.content
    assert "Bob, a neighbour" in result.content
    assert "L7: Plays the trombone." in result.content
    assert "L8: Has a dog named Rex." in result.content
    assert "alice.md" not in result.content  # shares no word with the query


async def test_line_numbers_point_at_the_whole_file(filled: Store) -> None:
    result = await _search(filled).call("search", {"query": "birthday"})
    text = filled.read("/memories/people/alice.md").split("\n")
    assert "L8: Her birthday is in March." in result.content
    assert text[7] == "Her birthday is in March."


async def test_path_words_and_description_are_searched(filled: Store) -> None:
    result = await _search(filled).call("search", {"query": "neighbour"})
    assert "/memories/people/bob.md" in result.content
    # "week" is only in the body of the trip file; "trips" only in its folder name.
    by_path = await _search(filled).call("search", {"query": "trips week"})
    first = by_path.content.split("\n")[2]
    assert first.startswith("1. /memories/trips/alps-2024.md"), by_path.content


async def test_k_and_path_limit_the_results(filled: Store) -> None:
    both = await _search(filled).call("search", {"query": "hiking alps"})
    assert "alice.md" in both.content and "alps-2024.md" in both.content
    one = await _search(filled).call("search", {"query": "hiking alps", "k": 1})
    assert one.content.count("(score ") == 1
    scoped = await _search(filled).call(
        "search", {"query": "hiking alps", "path": "/memories/people"}
    )
    assert "alice.md" in scoped.content and "alps-2024.md" not in scoped.content
    assert "under /memories/people" in scoped.content


async def test_bad_queries_and_arguments_are_tool_errors(filled: Store) -> None:
    tools = _search(filled)
    for query in ["", "   ", "the of and", "?!", "a b c"]:
        result = await tools.call("search", {"query": query})
        assert result.is_error and "no searchable words" in result.content, query
    bad_k = await tools.call("search", {"query": "alice", "k": 0})
    assert bad_k.is_error and "between 1 and 50" in bad_k.content
    outside = await tools.call("search", {"query": "alice", "path": "/etc"})
    assert outside.is_error
    missing = await tools.call("search", {"query": "alice", "path": "/memories/nowhere"})
    assert missing.is_error and "not a folder" in missing.content


async def test_no_match_is_an_answer_not_an_error(filled: Store) -> None:
    result = await _search(filled).call("search", {"query": "xylophone"})
    assert not result.is_error
    assert result.content.startswith("No file contains any word")


async def test_index_follows_edits_deletes_and_shell_like_writes(filled: Store) -> None:
    tools = _search(filled)
    assert "bob.md" in (await tools.call("search", {"query": "trombone"})).content
    filled.delete("/memories/people/bob.md")
    assert (await tools.call("search", {"query": "trombone"})).content.startswith("No file")
    # A write that bypasses the store is seen once it is reported (the shell tool
    # reports its commands' changes this way).
    host = filled.root / "misc.md"
    host.write_text(_md("misc", "Odds", "A trombone lesson on Friday.\n"), encoding="utf-8")
    os.utime(host, ns=(1, 1))
    filled.note_change()
    result = await tools.call("search", {"query": "trombone"})
    assert "1. /memories/misc.md" in result.content


@pytest.mark.parametrize("feed", [True, False], ids=["change-feed", "walk"])
def test_outside_writes_are_seen_by_the_next_refresh(filled: Store, feed: bool) -> None:
    index = FileIndex(filled, feed=feed)
    assert index.refresh() is True
    assert index.live is feed
    host = filled.root / "misc.md"
    host.write_text(_md("misc", "Odds", "A trombone lesson.\n"), encoding="utf-8")
    assert index.refresh() is True  # nobody told memdir: the feed (or the walk) saw it
    assert index.search("trombone", 5)[0].path == "/memories/misc.md"
    assert index.refresh() is False


@pytest.mark.parametrize("feed", [True, False], ids=["change-feed", "walk"])
def test_an_edit_in_place_with_size_and_mtime_put_back_is_seen(filled: Store, feed: bool) -> None:
    # What a person's editor or `bash` can do: same bytes count, same inode, and the
    # modification time restored afterwards. Only the change time betrays it.
    index = FileIndex(filled, feed=feed)
    index.refresh()
    host = filled.root / "people" / "bob.md"
    before = host.stat()
    data = host.read_bytes()
    assert b"trombone" in data
    with open(host, "r+b") as handle:  # in place: no new inode, no rename
        handle.write(data.replace(b"trombone", b"clarinet"))
    os.utime(host, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = host.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino, before.st_size, before.st_mtime_ns)
    assert index.refresh() is True
    assert index.search("clarinet", 5)[0].path == "/memories/people/bob.md"
    assert index.search("trombone", 5) == []


def test_index_rebuilds_only_when_files_change(filled: Store) -> None:
    index = FileIndex(filled)
    assert index.refresh() is True
    assert index.refresh() is False
    assert len(index) == 4 and index.builds == 1
    filled.write("/memories/new.md", _md("new", "New", "fresh words\n"))
    assert index.refresh() is True
    assert index.search("fresh", 5)[0].path == "/memories/new.md"


def test_index_is_shared_per_root(filled: Store) -> None:
    assert index_for(filled) is index_for(Store(filled.root))


def test_hidden_and_non_markdown_files_are_not_indexed(filled: Store) -> None:
    (filled.root / "notes.txt").write_text("zebra", encoding="utf-8")
    (filled.root / ".memdir" / "x.md").write_text("zebra", encoding="utf-8")
    index = FileIndex(filled)
    index.refresh()
    assert index.search("zebra", 5) == []
    assert "/memories/notes.txt" not in index.paths


def test_empty_store_returns_nothing(store: Store) -> None:
    index = FileIndex(store)
    index.refresh()
    assert index.search("anything", 3) == []


async def test_bm25_set_is_the_read_set_plus_search(filled: Store) -> None:
    tools = bm25_set(filled)
    assert tools.name == "bm25"
    assert list(tools.tools) == ["view", "grep", "toc", "section_read", "search"]
    assert all(spec.read_only for spec in tools.tools.values())
    assert make_toolset("bm25", filled).digest() == tools.digest()
    result = await tools.call("search", {"query": "compilers"})
    assert "alice.md" in result.content


def test_search_description_is_written_for_a_model(filled: Store) -> None:
    info = search_spec(filled).info()
    assert "view_range" in info["description"]
    assert set(info["parameters"]["properties"]) == {"query", "k", "path"}
    assert info["parameters"]["required"] == ["query"]


async def test_quoted_and_folded_descriptions_are_shown_parsed(store: Store) -> None:
    quoted = '---\nname: q\ndescription: "Plans: zeppelin ride"\n---\nzeppelin\n'
    folded = "---\nname: f\ndescription: >\n  Folded zeppelin\n---\nzeppelin\n"
    store.write("/memories/q.md", quoted)
    store.write("/memories/f.md", folded)
    result = await _search(store).call("search", {"query": "zeppelin"})
    assert "   Plans: zeppelin ride" in result.content
    assert "   Folded zeppelin" in result.content


def test_scores_equal_bm25s_lucene_scores(store: Store) -> None:
    import random

    import bm25s
    import numpy as np

    from memdir.tools._bm25index import index_text

    rng = random.Random(5)
    words = [f"w{i}" for i in range(60)]
    for number in range(40):
        body = " ".join(rng.choice(words[: rng.randint(5, 60)]) for _ in range(rng.randint(0, 80)))
        store.write(f"/memories/d/f{number}.md", _md(f"f{number}", f"file {number}", body))
    index = FileIndex(store)
    index.refresh()
    corpus = [
        index.tokenizer(index_text(p, store.read(p))) for p in index.paths
    ]
    reference = bm25s.BM25()
    reference.index(corpus, show_progress=False)
    for query in (["w1"], ["w3", "w50"], ["w7", "w8", "w9", "w59"]):
        expected = np.asarray(reference.get_scores(query), dtype=np.float64)
        hits = index.search(query, 40)
        got = dict.fromkeys(index.paths, 0.0) | {h.path: h.score for h in hits}
        assert np.allclose([got[p] for p in index.paths], expected, rtol=1e-5, atol=1e-6)
        assert len(hits) == int((expected > 0).sum())
