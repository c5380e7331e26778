"""The optional version precondition: off by default, and when on, a stale edit is refused."""

from __future__ import annotations

import re

from memdir.store import Store
from memdir.tools._memory import write_set

DOC = "---\nname: a\ndescription: a\n---\nfirst line\n"


def test_off_by_default_the_write_set_is_the_papers() -> None:
    import tempfile

    store = Store(tempfile.mkdtemp())
    # The digest the write set had before versions existed (memdir daaa58e).
    assert write_set(store).digest() == "a63016bbbe44e0fd"
    assert "version" not in str(write_set(store).infos())
    on = write_set(store, versions=True)
    assert "expected_version" in str(on.tools["str_replace"].info())
    assert on.digest() != write_set(store).digest()


async def test_a_stale_edit_is_refused_and_a_fresh_one_goes_through(store: Store) -> None:
    tools = write_set(store, versions=True)
    created = await tools.call("create", {"path": "/memories/a.md", "file_text": DOC})
    viewed = await tools.call("view", {"path": "/memories/a.md"})
    match = re.search(r"\[version (\w+)\]", viewed.content)
    assert match is not None and match.group(0) in created.content
    seen = match.group(1)
    store.write("/memories/a.md", DOC.replace("first", "someone else's"))
    stale = await tools.call("str_replace", {"path": "/memories/a.md", "old_str": "line",
                                             "new_str": "row", "expected_version": seen})
    assert stale.is_error and "changed since you read it" in stale.content
    assert store.read("/memories/a.md") == DOC.replace("first", "someone else's")
    fresh = store.version("/memories/a.md")
    done = await tools.call("insert", {"path": "/memories/a.md", "insert_line": 5,
                                       "insert_text": "more", "expected_version": fresh})
    assert not done.is_error and f"[version {store.version('/memories/a.md')}]" in done.content
    gone = await tools.call("delete", {"path": "/memories/a.md", "expected_version": fresh})
    assert gone.is_error and store.exists("/memories/a.md")
    ok = await tools.call("delete", {"path": "/memories/a.md"})
    assert not ok.is_error and not store.exists("/memories/a.md")
