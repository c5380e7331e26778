"""The health page stays small on a store with many alarms: paged, counted by kind, filtered."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from memdir.browse import open_target
from memdir.store import Store

from .conftest import Served


def get(site: Served, path: str) -> httpx.Response:
    return httpx.get(site.url(path), headers={"Authorization": f"Bearer {site.token}"},
                     timeout=120)


@pytest.fixture(scope="module")
def alarmed_site(serve_catalog: Any, tmp_path_factory: pytest.TempPathFactory) -> Served:
    """450 files, each giving one subject two undated values and citing a missing file."""
    store = Store(tmp_path_factory.mktemp("alarmed") / "memories", create=True)
    for k in range(450):
        word = "".join("bcdfghklmn"[int(d)] for d in f"{k:03d}")  # own word, never a month
        store.create(f"/memories/people/p{k}.md",
                     f"---\nname: p{k}\ndescription: home town and city of person {k}\n---\n"
                     f"- Home: town {word}\n- Home: city {word}\nsee /memories/gone-{k}.md\n")
    return serve_catalog(open_target(store.root))  # type: ignore[no-any-return]


def _rows(html: str, kind: str) -> int:
    return len(re.findall(f'<tr class="{kind}">', html))


def test_the_health_page_is_paged_and_counts_alarms_by_kind(alarmed_site: Served) -> None:
    first = get(alarmed_site, "/s/store/health")
    assert first.status_code == 200
    html = first.text
    assert "lint defects (450)" in html and "health alarms (450)" in html
    assert "conflicting values</a> (450)" in html
    assert _rows(html, "finding") == 200 and _rows(html, "alarm") == 200
    assert "page 1 of 3" in html and 'href="?page=2"' in html
    last = get(alarmed_site, "/s/store/health?page=3").text
    assert _rows(last, "finding") == 50 and _rows(last, "alarm") == 50
    assert 'href="?page=2"' in last and "?page=4" not in last
    assert len(first.content) < 1_000_000


def test_one_kind_of_alarm_and_bad_page_numbers(alarmed_site: Served) -> None:
    one = get(alarmed_site, "/s/store/health?kind=conflicting+values&page=2").text
    assert _rows(one, "alarm") == 200 and _rows(one, "finding") == 0
    assert "lint defects" not in one and 'href="?kind=conflicting+values&amp;page=3"' in one
    missing = get(alarmed_site, "/s/store/health?kind=near-duplicate")
    assert missing.status_code == 404 and "conflicting values" in missing.text
    assert get(alarmed_site, "/s/store/health?page=x").status_code == 400
    assert _rows(get(alarmed_site, "/s/store/health?page=99").text, "alarm") == 50  # the last
