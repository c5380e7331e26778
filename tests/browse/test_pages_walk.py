"""What a newcomer meets on the browser's pages: each page says what it shows and why.

A study run made in one folder and opened from another, its cell pages (scores
first, filters, pages of questions, what each read looked for), the report, a
404 that keeps the store's navigation, a file deleted since a past step, a
conversation from no benchmark, the growth charts' axes, and the command's
own errors (a taken port, Ctrl-C).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from interrupting import default_sigint
from memdir.browse import open_target
from memdir.browse._charts import growth_chart, value_range
from memdir.browse._run_pages import PAGE_SIZE
from memdir.sample import build_sample_store, load_sample_conversation
from memdir.store.history import History
from memdir.study import StudyConfig, run_study, write_report

from .conftest import SHARED_DATA, Served

QUESTIONS = 30


def get(site: Served, path: str) -> httpx.Response:
    return httpx.get(site.url(path), headers={"Authorization": f"Bearer {site.token}"},
                     timeout=60)


@pytest.fixture(scope="module")
def moved_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A study run started with a relative --out in one folder; the test opens it elsewhere."""
    if not (SHARED_DATA / "locomo").is_dir():
        pytest.skip("../shared/data/locomo is not present on this machine")
    config = StudyConfig.model_validate({
        "name": "walk", "data_dir": str(SHARED_DATA),
        "benchmarks": [{"name": "locomo", "conversations": ["conv-50"], "limit": QUESTIONS}],
        "variants": ["verbatim"], "search": {"models": ["memdir/grep-reader"]},
    })
    started_in = tmp_path_factory.mktemp("started-in")
    before = Path.cwd()
    os.chdir(started_in)
    try:
        run_study(config, Path("runs/walk"))
    finally:
        os.chdir(before)
    return started_in / "runs" / "walk"


def test_a_run_opened_from_another_folder_shows_its_stores(moved_run: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    [record] = list((moved_run / "stores").glob("*.json"))
    assert json.loads(record.read_text())["path"].startswith("stores/")  # the run's own
    monkeypatch.chdir(tmp_path)
    catalog = open_target(moved_run)
    assert len(catalog.stores) == 1 and catalog.missing == {}
    # A run written before: the path was relative to the folder it was started in.
    old = dict(json.loads(record.read_text()))
    old["path"] = "runs/walk/" + old["path"]
    record.write_text(json.dumps(old))
    try:
        assert len(open_target(moved_run).stores) == 1
    finally:
        record.write_text(json.dumps({**old, "path": old["path"].removeprefix("runs/walk/")}))


def test_a_store_that_is_gone_is_named_with_why(moved_run: Path, tmp_path: Path,
                                                serve_catalog: Any) -> None:
    [record] = list((moved_run / "stores").glob("*.json"))
    kept = record.read_text()
    record.write_text(json.dumps({**json.loads(kept), "path": str(tmp_path / "nowhere")}))
    try:
        catalog = open_target(moved_run)
        assert catalog.stores == {} and list(catalog.missing.values()) == [
            f"its folder {tmp_path / 'nowhere'} is not there (moved or deleted?)"]
        page = get(serve_catalog(catalog), "/").text
        assert "cannot be shown" in page and "nowhere" in page
    finally:
        record.write_text(kept)


@pytest.fixture(scope="module")
def run_site(moved_run: Path, serve_catalog: Any) -> Served:
    return serve_catalog(open_target(moved_run))  # type: ignore[no-any-return]


def _cell(run_site: Served) -> str:
    index = get(run_site, "/").text
    return index.split('/run/cell/', 1)[1].split('"', 1)[0]


def test_a_cell_page_opens_on_its_scores_and_pages_its_questions(run_site: Served) -> None:
    key = _cell(run_site)
    first = get(run_site, f"/run/cell/{key}").text
    assert '<table class="grid scores">' in first and "token F1" in first
    assert first.count('<section class="question"') == PAGE_SIZE
    assert f"{QUESTIONS} of {QUESTIONS} question(s), page 1 of 2" in first
    second = get(run_site, f"/run/cell/{key}?page=2").text
    assert second.count('<section class="question"') == QUESTIONS - PAGE_SIZE
    assert f'id="q-{PAGE_SIZE + 1}"' in second
    wrong = get(run_site, f"/run/cell/{key}?wrong=1").text
    shown = wrong.count('<section class="question"')
    assert 0 < shown <= PAGE_SIZE and "only answered wrong" in wrong
    category = first.split('<option value="', 2)[2].split('"', 1)[0]
    only = get(run_site, f"/run/cell/{key}?category={category}").text
    assert only.count(f'<span class="meta">{category}</span>') == only.count(
        '<section class="question"') > 0
    # every grep the agent made says what it looked for
    assert "<li>grep in" not in first and '<code class="query">' in first
    assert "inspect view --log-dir" in first and "inspect view start" not in first


def test_the_run_links_its_report_once_written(moved_run: Path, serve_catalog: Any) -> None:
    before = get(serve_catalog(open_target(moved_run)), "/").text
    assert "no report yet" in before and "memdir study report" in before
    write_report(moved_run)
    site = serve_catalog(open_target(moved_run))
    assert f'href="/{site.token}/run/report/"' in get(site, "/").text
    report = get(site, "/run/report/")
    assert report.status_code == 200 and "<table>" in report.text
    figure = report.text.split('<img src="', 1)[1].split('"', 1)[0]
    image = get(site, f"/run/report/{figure}")
    assert image.status_code == 200 and image.content[:4] == b"\x89PNG"
    assert get(site, "/run/report/../manifest.json").status_code == 404


def test_a_closed_book_cell_says_it_has_no_store(serve_catalog: Any, tmp_path: Path) -> None:
    if not (SHARED_DATA / "locomo").is_dir():
        pytest.skip("../shared/data/locomo is not present on this machine")
    config = StudyConfig.model_validate({
        "name": "closed", "data_dir": str(SHARED_DATA),
        "benchmarks": [{"name": "locomo", "conversations": ["conv-50"], "limit": 2}],
        "variants": ["closed-book"], "search": {"models": ["memdir/grep-reader"]},
    })
    run_study(config, tmp_path / "closed")
    site = serve_catalog(open_target(tmp_path / "closed"))
    assert "none: closed-book" in get(site, "/").text
    cell = get(site, f"/run/cell/{_cell(site)}").text
    assert "1 round, 0 tool calls (0 errors)" in cell and "1 rounds" not in cell


@pytest.fixture(scope="module")
def sample_site(serve_catalog: Any, tmp_path_factory: pytest.TempPathFactory) -> Served:
    """The sample store with a history in which a file is deleted after step 0."""
    store = build_sample_store(tmp_path_factory.mktemp("sample") / "memories")
    history = History(store)
    history.init()
    history.snapshot("as built")
    store.delete("/memories/plans/theo-visits-bristol.md")
    history.snapshot("the visit happened")
    catalog = open_target(store.root, conversation=load_sample_conversation())
    return serve_catalog(catalog)  # type: ignore[no-any-return]


def test_a_404_keeps_the_stores_navigation(sample_site: Served) -> None:
    missing = get(sample_site, "/s/store/file/nowhere.md")
    assert missing.status_code == 404
    assert "/s/store/search" in missing.text and "the store's tree" in missing.text
    # the same with the token in the path, as a browser opens it
    opened = httpx.get(sample_site.page("/s/store/file/nowhere.md"), timeout=60)
    assert opened.status_code == 404
    assert f'action="/{sample_site.token}/s/store/search"' in opened.text


def test_a_404_at_no_route_keeps_the_navigation_and_says_what_to_do(
        sample_site: Served) -> None:
    opened = httpx.get(sample_site.page("/no/such/page"), timeout=60)
    assert opened.status_code == 404
    assert f'action="/{sample_site.token}/s/store/search"' in opened.text
    assert "Not Found" not in opened.text and "/no/such/page" in opened.text


def test_a_file_deleted_since_a_step_has_no_dead_now_link(sample_site: Served) -> None:
    past = get(sample_site, "/s/store/file/plans/theo-visits-bristol.md?step=0").text
    assert "deleted since" in past
    assert 'theo-visits-bristol.md">now' not in past
    kept = get(sample_site, "/s/store/file/people/maya.md?step=0").text
    assert f'href="/{sample_site.token}/s/store/file/people/maya.md">now</a>' in kept


def test_a_turn_of_a_conversation_from_no_benchmark(sample_site: Served) -> None:
    turn = get(sample_site, "/s/store/turn/S2T5").text
    assert "from conversation sample" in turn and "None" not in turn


def test_the_tree_page_keeps_its_sentences_apart(sample_site: Served) -> None:
    tree = get(sample_site, "/s/store/").text
    assert '<p class="summary checks">' in tree


def test_growth_charts_scale_fairly_and_label_their_axes() -> None:
    assert value_range([3, 5, 6]) == (0.0, 6.0)  # counts start at zero
    low, high = value_range([4.176, 4.2, 4.25])
    assert high - low >= 0.2 * 4.25 - 1e-9 and low < 4.176 and high > 4.25  # no cliff
    chart = growth_chart("mean leaf depth", [4.176, 4.25], 1, lambda i: f"?step={i}")
    assert "step 0" in chart.svg and ">1</text>" in chart.svg
    assert 'text-anchor="end">4.' in chart.svg  # the value labels stand left of the plot


def _free_port_held() -> socket.socket:
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    return held


def test_a_taken_port_is_one_line_and_ctrl_c_exits_130(tmp_path: Path) -> None:
    store = build_sample_store(tmp_path / "s")
    held = _free_port_held()
    try:
        port = held.getsockname()[1]
        taken = subprocess.run([sys.executable, "-m", "memdir", "browse", str(store.root),
                                "--port", str(port)], capture_output=True, text=True,
                               timeout=120, check=False)
    finally:
        held.close()
    assert taken.returncode == 2, taken.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in taken.stderr
    assert "Traceback" not in taken.stderr and len(taken.stderr.splitlines()) == 2
    process = subprocess.Popen([sys.executable, "-m", "memdir", "browse", str(store.root),
                                "--port", "0"], stderr=subprocess.PIPE, text=True,
                               preexec_fn=default_sigint)
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if process.stderr.readline().startswith("open http://"):
                break
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
    finally:
        process.kill()


def test_chart_value_labels_fit_their_margin() -> None:
    chart = growth_chart("bytes", [0, 52_000, 104_937], 2, lambda i: f"?step={i}")
    assert ">105k</text>" in chart.svg and "104,937</text>" not in chart.svg
    assert chart.current == "104,937"  # the caption keeps the exact value
