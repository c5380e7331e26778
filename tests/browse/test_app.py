"""The browser's HTTP behaviour: the token gate, loopback hosts, escaping, errors, the CLI.

Requests go over real HTTP to the app served on a loopback port.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from memdir.browse import open_target
from memdir.cli import app
from memdir.store import Store, lint_store

from .conftest import Served


def get(site: Served, path: str, **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {site.token}", **kwargs.pop("headers", {})}
    return httpx.get(site.url(path), headers=headers, timeout=60, **kwargs)


@pytest.fixture(scope="module")
def odd_site(serve_catalog: Any, tmp_path_factory: pytest.TempPathFactory) -> Served:
    """A store whose files try to inject markup, and one with a broken header."""
    store = Store(tmp_path_factory.mktemp("odd") / "memories", create=True)
    store.create("/memories/notes/evil.md", "---\nname: evil\ndescription: <b>bold</b> claim\n"
                 "---\n# Notes <script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n"
                 "see /memories/notes/evil.md > ## Nowhere\n")
    store.create("/memories/bare.md", "no frontmatter here\n")
    return serve_catalog(open_target(store.root))  # type: ignore[no-any-return]


def test_the_token_gate(store_site: Served) -> None:
    assert httpx.get(store_site.url("/s/store/"), timeout=30).status_code == 401
    wrong = httpx.get(store_site.url("/nope/s/store/"), timeout=30)
    assert wrong.status_code == 401 and "needs its token" in wrong.text
    assert get(store_site, "/s/store/").status_code == 200
    # the token as the first segment of the path, as the printed URL has it
    page = httpx.get(store_site.page("/s/store/?q=session"), timeout=30)
    assert page.status_code == 200 and "session-01.md" in page.text
    assert "set-cookie" not in page.headers  # nothing a browser would send to other ports
    assert f'href="/{store_site.token}/s/store/file/session-01.md"' in page.text
    bare = httpx.get(store_site.url(f"/{store_site.token}"), timeout=30)
    assert bare.status_code == 307 and bare.headers["location"] == f"/{store_site.token}/"
    # the query form of earlier versions admits nothing any more
    old = httpx.get(store_site.url(f"/s/store/?token={store_site.token}"), timeout=30)
    assert old.status_code == 401


def test_every_response_forbids_remote_loads_and_referrers(store_site: Served) -> None:
    responses = [
        httpx.get(store_site.page("/s/store/file/overview.md"), timeout=30),
        httpx.get(store_site.page("/static/style.css"), timeout=30),
        httpx.get(store_site.page("/s/store/file/nope.md"), timeout=30),  # 404
        httpx.get(store_site.url("/s/store/"), timeout=30),  # 401
        get(store_site, "/s/store/", headers={"Host": "attacker.example"}),  # 400
    ]
    assert [r.status_code for r in responses] == [200, 200, 404, 401, 400]
    for response in responses:
        csp = response.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "img-src 'self'" in csp
        assert response.headers["referrer-policy"] == "no-referrer"


def test_hosts_other_than_loopback_are_refused(store_site: Served) -> None:
    response = get(store_site, "/s/store/", headers={"Host": "attacker.example"})
    assert response.status_code == 400


def test_store_text_is_escaped_never_markup(odd_site: Served) -> None:
    page = get(odd_site, "/s/store/file/notes/evil.md").text
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    tree = get(odd_site, "/s/store/").text
    assert "&lt;b&gt;bold&lt;/b&gt; claim" in tree


def test_the_file_page_lists_what_lint_finds(odd_site: Served, conv50_store: Store,
                                             store_site: Served) -> None:
    page = get(odd_site, "/s/store/file/bare.md").text
    assert "missing-frontmatter" in page
    page = get(odd_site, "/s/store/file/notes/evil.md").text
    assert 'class="xref dangling"' in page and "has no section Nowhere" in page
    # every dangling reference lint reports is marked on its file's page, and no other
    for finding in [f for f in lint_store(conv50_store) if f.code == "dangling-reference"]:
        rel = finding.path.removeprefix("/memories/")
        assert get(store_site, f"/s/store/file/{rel}").text.count('class="xref dangling"') == 1
    clean = get(store_site, "/s/store/file/session-02.md").text
    assert 'class="xref dangling"' not in clean


def test_health_page_links_each_finding(store_site: Served) -> None:
    page = get(store_site, "/s/store/health").text
    assert "lint defects (1)" in page
    assert f'href="/{store_site.token}/s/store/file/overview.md?lines=17-17#L17"' in page


def test_errors_say_what_to_do(store_site: Served) -> None:
    missing = get(store_site, "/s/store/file/nope.md")
    assert missing.status_code == 404 and "open the tree" in missing.text
    bad = get(store_site, "/s/store/file/session-01.md?lines=x")
    assert bad.status_code == 400 and "12-18" in bad.text
    escape = get(store_site, "/s/store/file/..%2F..%2Fetc%2Fpasswd")
    assert escape.status_code == 404
    step = get(store_site, "/s/store/history?step=99")
    assert step.status_code == 404 and "no step 99" in step.text
    assert get(store_site, "/s/other/").status_code == 404
    regex = get(store_site, "/s/store/search?q=(unclosed")
    assert regex.status_code == 200 and "not a valid Python regular expression" in regex.text


def test_a_past_step_shows_the_file_as_it_was(store_site: Served) -> None:
    page = get(store_site, "/s/store/file/session-01.md?step=0").text
    assert "as of" in page and "step 0" in page
    gone = get(store_site, "/s/store/file/overview.md?step=3")
    assert gone.status_code == 404 and "not in step 3" in gone.text


def test_a_build_folder_names_its_conversation(tmp_path: Path, shared_data: Path) -> None:
    from memdir.builders import BuildRecord, BuildSpec, BuildState

    folder = tmp_path / "curated-build"
    store = Store(folder / "memories", create=True)
    store.create("/memories/calvin.md", "---\nname: calvin\ndescription: Calvin\n---\n"
                 "# Calvin\n\nBought a car [S2T1].\n")
    spec = BuildSpec(variant="curated", conversation_id="conv-50", conversation_hash="0",
                     source_hash="0", model="mockllm/model", role="management",
                     prompt_name="management-conversation", prompt_hash="0", turn_hash="0",
                     toolset="write", toolset_digest="0", max_rounds=1, max_tokens=None,
                     effort=None, temperature=None, chunk_tokens=2000)
    record = BuildRecord(variant="curated", conversation_id="conv-50", benchmark="locomo")
    state = BuildState(key="k", spec=spec, status="complete", record=record)
    (folder / "build.json").write_text(state.model_dump_json(), encoding="utf-8")
    catalog = open_target(folder, data_dir=shared_data)
    [entry] = catalog.stores.values()
    assert entry.store.root == (folder / "memories").resolve()
    assert "curated build by mockllm/model" in entry.origin
    conversation, problem = entry.conversation()
    assert problem is None and conversation is not None and conversation.id == "conv-50"
    # without the data folder the page says why the locators are not linked
    unlinked = open_target(folder, data_dir=None)
    _, problem = next(iter(unlinked.stores.values())).conversation()
    assert problem is not None and "MEMDIR_DATA_DIR" in problem


def test_cli_refuses_remote_hosts_and_non_folders(tmp_path: Path) -> None:
    runner = CliRunner()
    remote = runner.invoke(app, ["browse", str(tmp_path), "--host", "0.0.0.0"])
    assert remote.exit_code == 2 and "loopback" in remote.output
    absent = runner.invoke(app, ["browse", str(tmp_path / "nothing")])
    assert absent.exit_code == 2 and "not a folder" in absent.output
    conversation = runner.invoke(app, ["browse", str(tmp_path), "--conversation", "conv-50"])
    assert conversation.exit_code == 2 and "BENCHMARK:ID" in conversation.output


@pytest.mark.slow
def test_cli_serves_the_url_it_prints(conv50_store: Store) -> None:
    # the MCP server's token is in the environment; the browser must not take it
    env = {**os.environ, "MEMDIR_MCP_TOKEN": "s3cret-of-the-mcp-server"}
    process = subprocess.Popen(
        [sys.executable, "-m", "memdir", "browse", str(conv50_store.root), "--port", "0",
         "--conversation", "locomo:conv-50", "--data-dir",
         str(Path(__file__).resolve().parents[2].parent / "shared" / "data")],
        stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 120
        url = None
        while url is None and time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line:
                break
            if line.startswith("open http://127.0.0.1:"):
                url = line.split()[1]
        assert url is not None and "s3cret" not in url
        token = url.rstrip("/").rsplit("/", 1)[1]
        assert len(token) >= 40  # 32 random bytes
        with httpx.Client(timeout=60, follow_redirects=True) as client:
            page = client.get(url)
            assert page.status_code == 200 and "session-30.md" in page.text
            turn = client.get(url + "s/store/turn/S2T10")
            assert turn.status_code == 200 and 'class="turn here"' in turn.text
            base = url.removesuffix(f"{token}/")
            for mcp in (f"{base}s3cret-of-the-mcp-server/", base):
                refused = client.get(mcp, headers={
                    "Authorization": "Bearer s3cret-of-the-mcp-server"})
                assert refused.status_code == 401
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def big_site(serve_catalog: Any, tmp_path_factory: pytest.TempPathFactory) -> Served:
    """A store of 1,010 small files in ten folders: past both size thresholds."""
    root = tmp_path_factory.mktemp("big") / "memories"
    for folder in range(10):
        (root / f"topic-{folder}").mkdir(parents=True)
        for number in range(101):
            name = f"note-{number:03d}"
            (root / f"topic-{folder}" / f"{name}.md").write_text(
                f"---\nname: {name}\ndescription: note {number} of topic {folder}\n---\n"
                f"# Note {number}\n\nText.\n", encoding="utf-8")
    return serve_catalog(open_target(root))  # type: ignore[no-any-return]


def test_a_large_store_collapses_its_folders_and_checks_on_request(big_site: Served) -> None:
    top = get(big_site, "/s/store/").text
    assert "1010 files" in top and "Folders are collapsed past 1000 files" in top
    assert "note-000.md" not in top and top.count('class="open"') == 10
    assert "run lint and the health check" in top  # 1,010 files: checked on request only
    opened = get(big_site, "/s/store/?under=/memories/topic-3").text
    assert opened.count(f'class="name" href="/{big_site.token}/s/store/file/topic-3/') == 101
    assert "topic-4/" not in opened
    filtered = get(big_site, "/s/store/?q=note 7 of").text
    assert "note-007.md" in filtered and "# Note 7" in filtered  # few files: headings shown
    health = get(big_site, "/s/store/health").text
    assert "lint defects (0)" in health
    after = get(big_site, "/s/store/").text
    assert "lint clean, no health alarms" in after  # computed once, shown everywhere


def _serve_on(host: str, store: Path) -> tuple[subprocess.Popen[str], str]:
    """Start ``memdir browse`` on ``host`` in a real process; return it and the URL it printed."""
    env = {**os.environ, "MEMDIR_MCP_TOKEN": "s3cret"}
    process = subprocess.Popen(
        [sys.executable, "-m", "memdir", "browse", str(store), "--host", host, "--port", "0"],
        stderr=subprocess.PIPE, text=True, env=env)
    assert process.stderr is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        if line.startswith("open http://"):
            return process, line.split()[1]
    process.terminate()
    raise AssertionError(f"memdir browse --host {host} printed no URL")


@pytest.mark.parametrize("host", ["::1", "127.0.0.2"])
def test_every_loopback_address_serves_and_still_refuses_foreign_hosts(
        host: str, tmp_path: Path) -> None:
    init = subprocess.run([sys.executable, "-m", "memdir", "init", str(tmp_path / "s")],
                          capture_output=True, text=True, timeout=120)
    assert init.returncode == 0, init.stderr
    process, url = _serve_on(host, tmp_path / "s")
    try:
        shown = f"[{host}]" if ":" in host else host
        assert url.startswith(f"http://{shown}:") and "s3cret" not in url
        with httpx.Client(timeout=60, follow_redirects=True) as client:
            assert client.get(url).status_code == 200
            foreign = client.get(url, headers={"Host": "attacker.example"})
            assert foreign.status_code == 400
    finally:
        process.terminate()
        process.wait(timeout=30)
