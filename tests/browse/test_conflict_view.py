"""A sync conflict as a person browses it: named in the tree, each version apart on the page.

Two real replicas meet in a bare repository (``file://`` path) and change the same line,
so the merge keeps both versions in a conflict block, as docs/replicas.md's session does.
The tree said only "⚠ 1" beside the file (the command line's tree says SYNC CONFLICT);
the rendered body showed the block's frame lines as text run into the list items around
them (the second version's label read as part of the first version's line); the panel
said "1 block keep".
"""

from __future__ import annotations

import re
import subprocess
from typing import Any

import httpx
import pytest

from memdir.browse import open_target
from memdir.store import Store
from memdir.store.replica import Replica

from .conftest import Served

PATH = "/memories/people/alice.md"
ALICE = ("---\nname: alice\ndescription: Alice, a friend from the climbing gym\n---\n"
         "# Alice\n\n- phone: 555-0100\n- climbs on Tuesdays\n")


@pytest.fixture(scope="module")
def conflicted_site(serve_catalog: Any, tmp_path_factory: pytest.TempPathFactory) -> Served:
    root = tmp_path_factory.mktemp("replicas")
    remote = root / "team.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    laptop = Replica(Store(root / "laptop", create=True), name="laptop")
    laptop.attach(str(remote))
    laptop.store.create(PATH, ALICE)
    laptop.sync()
    desk, _ = Replica.clone(str(remote), root / "desk", name="desk")
    desk.store.edit(PATH, lambda t: t.replace("555-0100", "555-0199 (new number)"))
    desk.sync()
    laptop.store.edit(PATH, lambda t: t.replace("555-0100", "555-0142"))
    assert laptop.sync().conflicts == [PATH]
    return serve_catalog(open_target(laptop.root))  # type: ignore[no-any-return]


def get(site: Served, path: str) -> str:
    page = httpx.get(site.url(path), headers={"Authorization": f"Bearer {site.token}"},
                     timeout=60)
    assert page.status_code == 200, page.text
    return page.text


def _markdown(html: str) -> str:
    return html.split('<div class="markdown">', 1)[1].split("</article>", 1)[0]


def test_the_tree_names_the_conflict(conflicted_site: Served) -> None:
    tree = get(conflicted_site, "/s/store/")
    assert re.search(r'<a class="flag conflict" href="[^"]*/file/people/alice\.md#conflicts"'
                     r"[^>]*>sync conflict</a>", tree), tree


def test_each_version_is_shown_apart_under_its_label(conflicted_site: Served) -> None:
    html = get(conflicted_site, "/s/store/file/people/alice.md")
    assert "sync conflict: 1 block keeps two versions" in html
    body = _markdown(html)
    # no frame line is left as text inside the markdown around the block
    assert "&lt;!-- memdir-conflict" not in body
    [box] = re.findall(r'<div class="conflict-block" id="L7" data-lines="7-12">.*?'
                       r"end of the block</p></div>", body, re.S)
    versions = re.findall(r'<div class="version"><p class="frame" id="L(\d+)">version: '
                          r"([^<]*)</p>(.*?)</div>", box, re.S)
    assert [(n, label) for n, label, _ in versions] == [("8", "replica laptop"),
                                                         ("10", "replica desk")]
    assert "555-0142" in versions[0][2] and "555-0199" not in versions[0][2]
    assert "555-0199 (new number)" in versions[1][2] and "555-0142" not in versions[1][2]
    assert 'id="L9"' in versions[0][2] and 'id="L11"' in versions[1][2]
    # the markdown after the block keeps its own line anchors
    after = body.split("end of the block</p></div>", 1)[1]
    assert 'id="L13"' in after and "climbs on Tuesdays" in after
    for number in (5, *range(7, 14)):  # line 6 is blank
        assert body.count(f'id="L{number}"') == 1, number


def test_the_numbered_view_keeps_the_block_as_written(conflicted_site: Served) -> None:
    html = get(conflicted_site, "/s/store/file/people/alice.md?view=lines")
    assert 'class="conflict-block"' not in html
    assert html.count("&lt;!-- memdir-conflict") == 4  # begin, two versions, end


def test_a_block_with_an_empty_side_says_so() -> None:
    from memdir.browse._render import Linked, LinkResolver, render_body
    from memdir.store import find_blocks
    from memdir.store._conflicts import render_block

    body = "# A\n\n" + render_block("0123abcd", "both kept", [("replica a", "- x"),
                                                               ("replica b", "")]) + "- y\n"
    text = "---\nname: a\ndescription: d\n---\n" + body
    links = LinkResolver(xref=lambda _: Linked(None, "unknown"), locator=lambda _: None)
    shown = render_body(body, 5, links, find_blocks(text))
    assert "(nothing: this side removed the lines)" in shown and "- y" not in shown
    assert 'id="L7"' in shown and "<li" in shown.split("end of the block")[1]
