"""The pages driven in headless Chromium on a real LoCoMo store, a study run and a skills run.

Each test clicks through a page the way a person would: open a file from the
tree, follow a reference, step the timeline, open a citation from a run. Set
MEMDIR_BROWSE_SCREENSHOTS to a folder to keep a screenshot of every view.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any

import pytest

from memdir.browse import open_target
from memdir.conversation import Conversation
from memdir.store import Store
from memdir.study import StudyConfig, run_study

from .conftest import SHARED_DATA, Served

pytestmark = pytest.mark.slow

SHOTS = os.environ.get("MEMDIR_BROWSE_SCREENSHOTS")


def shot(driver: Any, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1400, min(max(int(height) + 40, 700), 2400))
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(str(Path(SHOTS) / f"browse-{name}.png"))
        driver.set_window_size(1400, 1000)


def by_css(driver: Any, selector: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, selector)


def all_css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def link(driver: Any, text: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.LINK_TEXT, text)


def login(driver: Any, site: Served, path: str = "/") -> None:
    """Open a page the way the URL ``memdir browse`` prints does (token first in the path)."""
    driver.get(site.page(path))
    assert "needs its token" not in by_css(driver, "body").text


def test_without_the_token_the_pages_are_refused(chrome: Any, store_site: Served) -> None:
    chrome.delete_all_cookies()
    chrome.get(store_site.url("/"))
    assert "needs its token" in by_css(chrome, "body").text


def test_open_a_file_from_the_tree_and_follow_a_reference(chrome: Any,
                                                          store_site: Served) -> None:
    login(chrome, store_site)
    rows = all_css(chrome, "li.file > a.name")
    assert [r.text for r in rows][:2] == ["overview.md", "session-01.md"]
    assert len(rows) == 31
    assert "Session 1; Thursday 23 March 2023" in by_css(chrome, ".treebox").text
    shot(chrome, "tree")
    link(chrome, "overview.md").click()
    assert chrome.current_url.endswith("/file/overview.md")
    assert "name: overview" in by_css(chrome, ".frontmatter pre").text
    dangling = by_css(chrome, ".markdown .xref.dangling")
    assert dangling.text == "/memories/people/dave.md"
    assert "does not exist" in dangling.get_attribute("title")
    assert "dangling-reference" in by_css(chrome, "#checks").text
    shot(chrome, "file")
    # a section reference lands on the heading's line of the same file
    link(chrome, "/memories/overview.md > ## Missing").click()
    assert chrome.current_url.endswith("/file/overview.md?lines=15-15#L15")
    assert by_css(chrome, "#L15").text == "Missing"
    # a file reference opens the file
    link(chrome, "/memories/session-02.md").click()
    assert chrome.current_url.endswith("/file/session-02.md")
    assert by_css(chrome, ".filehead h1").text == "session-02"


def test_a_locator_opens_its_turn(chrome: Any, store_site: Served,
                                  conversation: Conversation) -> None:
    login(chrome, store_site, "/s/store/file/overview.md")
    link(chrome, "S2T10").click()
    here = by_css(chrome, ".turn.here")
    assert here.get_attribute("id") == "S2T10"
    assert conversation.turn("S2T10").text in here.text
    # and back: the store lines that give the locator, each opening its file there
    back = [a.text for a in all_css(chrome, ".citedby a")]
    assert back == ["/memories/overview.md:13", "/memories/session-02.md:19"]
    shot(chrome, "turn")


def test_health_page_opens_each_defect_at_its_line(chrome: Any, store_site: Served) -> None:
    login(chrome, store_site, "/s/store/health")
    assert "lint defects (1)" in by_css(chrome, "main").text
    shot(chrome, "health")
    link(chrome, "/memories/overview.md").click()
    assert chrome.current_url.endswith("/file/overview.md?lines=17-17#L17")
    assert "/memories/people/dave.md" in by_css(chrome, ".markdown .cited").text


def test_search_box_greps_and_ranks(chrome: Any, store_site: Served) -> None:
    login(chrome, store_site)
    box = by_css(chrome, "form.search input[name=q]")
    box.send_keys("Aerosmith")
    box.submit()
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(chrome, 30, poll_frequency=0.2).until(
        lambda d: "/search?q=Aerosmith" in d.current_url and all_css(d, "pre.tool"))
    output = by_css(chrome, "pre.tool")
    assert "matching line(s)" in output.text
    first = all_css(chrome, "pre.tool a")[0]
    target = first.text
    shot(chrome, "search")
    first.click()
    assert "?lines=" in chrome.current_url
    assert "Aerosmith" in by_css(chrome, ".markdown .cited").text
    assert target.split(":")[0].endswith(chrome.current_url.split("/file/")[1].split("?")[0])
    chrome.get(store_site.page("/s/store/search?q=aerosmith+concert&mode=ranked"))
    assert "ranked for 'aerosmith concert'" in by_css(chrome, "pre.tool").text


def wait_for(driver: Any, selector: str, count: int, seconds: float = 120) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, seconds, poll_frequency=0.5).until(
        lambda d: len(all_css(d, selector)) == count)


def test_step_the_timeline(chrome: Any, store_site: Served) -> None:
    login(chrome, store_site, "/s/store/history")
    # the growth table is measured in the background; the page reloads itself until then
    wait_for(chrome, "svg.chart", 12)
    assert by_css(chrome, ".stepper .current").text == "step 30"  # 31 snapshots, from 0
    assert "+ /memories/overview.md" in by_css(chrome, ".changed").text
    assert len(all_css(chrome, "svg.chart")) == 12
    shot(chrome, "history")
    by_css(chrome, ".stepper a.prev").click()
    assert by_css(chrome, ".stepper .current").text == "step 29"
    assert "session-30.md" in by_css(chrome, ".changed").text
    assert len(all_css(chrome, ".treebox li.file")) == 30
    # every point of a curve is a link to its step
    all_css(chrome, "svg.chart a")[5].click()
    assert by_css(chrome, ".stepper .current").text == "step 5"
    assert len(all_css(chrome, ".treebox li.file")) == 6  # sessions 1 to 6 are steps 0 to 5
    assert by_css(chrome, "figure figcaption .value").text == "6"  # the files curve
    link(chrome, "/memories/session-06.md").click()
    assert "as of step 5" in by_css(chrome, ".stepnote").text


@pytest.fixture(scope="module")
def study_site(serve_catalog: Any, tmp_path_factory: pytest.TempPathFactory) -> Served:
    if not (SHARED_DATA / "locomo").is_dir():
        pytest.skip("../shared/data/locomo is not present on this machine")
    config = StudyConfig.model_validate({
        "name": "browse", "data_dir": str(SHARED_DATA),
        "benchmarks": [{"name": "locomo", "conversations": ["conv-50"], "limit": 3}],
        "variants": ["verbatim"], "search": {"models": ["memdir/grep-reader"]},
    })
    out = tmp_path_factory.mktemp("study")
    run_study(config, out)
    return serve_catalog(open_target(out))  # type: ignore[no-any-return]


def test_open_a_citation_from_a_run(chrome: Any, study_site: Served) -> None:
    login(chrome, study_site)
    row = by_css(chrome, "tr.cell.complete")
    assert "locomo conv-50" in row.text and "3/3" in row.text
    shot(chrome, "run")
    by_css(chrome, "tr.cell a").click()
    assert len(all_css(chrome, "section.question")) == 3
    assert all_css(chrome, "a.log")
    shot(chrome, "cell")
    citation = all_css(chrome, "a.citation")[0]
    raw = citation.text  # e.g. [/memories/session-02.md:L19]
    citation.click()
    line = int(raw.rsplit(":L", 1)[1].split("-")[0].rstrip("]"))
    assert chrome.current_url.endswith(f"#L{line}")
    cited = by_css(chrome, ".markdown .cited")
    assert int(cited.get_attribute("data-lines").split("-")[0]) <= line
    shot(chrome, "citation")
    # the run names each store's conversation, so evidence locators open their turns
    chrome.back()
    evidence = all_css(chrome, "section.question dd .locator a")[0]
    locator = evidence.text
    evidence.click()
    assert by_css(chrome, ".turn.here").get_attribute("id") == locator


@pytest.fixture(scope="module")
def skills_site(serve_catalog: Any, tmp_path_factory: pytest.TempPathFactory) -> Served:
    from memdir.skills import AlfworldEnv, RunConfig, alfworld_missing, list_tasks, run_cell

    reason = alfworld_missing()
    if reason is not None:
        pytest.skip(reason)
    folder = SHARED_DATA / "alfworld" / "valid_seen"
    if not folder.is_dir():
        pytest.skip("../shared/data/alfworld/valid_seen is not present on this machine")
    tasks = list_tasks(folder)
    games = ("pick_two_obj_and_place-ToiletPaper-None-Toilet-408",
             "pick_two_obj_and_place-SprayBottle-None-Toilet-429")
    out = tmp_path_factory.mktemp("skills")
    config = RunConfig(name="t", data=folder, output=out, variants=["episode_log_recent"],
                       task_ids=[t.task_id for t in tasks if t.task_id.split("/")[0] in games],
                       episode_k=2)
    env = AlfworldEnv(max_steps=config.max_steps, facts=True,
                      cache_dir=tmp_path_factory.mktemp("cache"))
    asyncio.run(run_cell(config, config.cells()[0], tasks, env))
    return serve_catalog(open_target(out))  # type: ignore[no-any-return]


def test_a_skills_chain_shows_each_task_and_the_library_after_it(chrome: Any,
                                                                 skills_site: Served) -> None:
    login(chrome, skills_site)
    link(chrome, "full").click()
    rows = all_css(chrome, "table.tasks tr.solved")
    assert len(rows) == 2
    shot(chrome, "chain")
    # the second task was served the first one's episode, as the library held it then
    served = all_css(chrome, "table.tasks tr")[2].find_elements("css selector", "td")[5]
    assert "/memories/" in served.text
    guidance = re.search(r"([\d,]+) chars of guidance", served.text)
    assert guidance is not None
    assert guidance[1] == f"{int(guidance[1].replace(',', '')):,}"  # 2,037, as counts elsewhere
    link(chrome, "step 2").click()
    assert by_css(chrome, ".stepper .current").text == "step 2"
    assert "task 002" in by_css(chrome, ".stepper .message").text  # task 2 of the chain page


def test_pages_never_write(conv50_store: Store, store_site: Served) -> None:
    # every test above has run against this store; it still holds exactly its last snapshot
    from memdir.store.history import History

    history = History(conv50_store)
    state = history.read_state(-1)
    assert {p: conv50_store.read(p) for p in conv50_store.files()} == state
    assert len(history.steps()) == 31
