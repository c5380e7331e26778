"""Fixtures for the browser tests: a real LoCoMo store with a history, a served app, Chromium.

The store is the verbatim dump of LoCoMo conv-50 (from ../shared/data) written one
session at a time with a snapshot after each, plus one hand-written overview file
whose cross-references (one of them dangling on purpose) give the pages something
to follow. The app is served by uvicorn on a loopback port in a thread of the test
process, and driven by Debian's chromium through chromedriver (selenium).
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn

from memdir.bench import load_benchmark
from memdir.browse import Catalog, browse_app, open_target
from memdir.builders import verbatim_files
from memdir.conversation import Conversation
from memdir.store import Store
from memdir.store.history import History

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
CHROME_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--window-size=1400,1000")

OVERVIEW = """---
name: overview
description: Where things are in the conv-50 dump, with links into the sessions
---
# Overview

Calvin and Dave talk over 30 sessions; what is missing is listed under
/memories/overview.md > ## Missing.

## Cars

Dave describes the car show in /memories/session-01.md [S1T2].
Aerosmith comes up in /memories/session-02.md, around [S2T10].

## Missing

An old note pointed at /memories/people/dave.md, which was never written.
"""


def conv50() -> Conversation:
    """LoCoMo conv-50, loaded by memdir's benchmark loader (skips where the data is absent)."""
    if not (SHARED_DATA / "locomo" / "locomo10.json").is_file():
        pytest.skip("../shared/data/locomo is not present on this machine")
    dataset = load_benchmark("locomo", SHARED_DATA)
    return next(c for c in dataset.conversations if c.id == "conv-50")


def build_conv50_store(root: Path, conversation: Conversation) -> Store:
    """The verbatim dump of conv-50, one snapshot per session, then the overview file."""
    store = Store(root, create=True)
    history = History(store)
    history.init()
    for path, text in verbatim_files(conversation):
        store.create(path, text)
        history.snapshot(f"session {path.rsplit('-', 1)[-1].removesuffix('.md')}")
    store.create("/memories/overview.md", OVERVIEW)
    history.snapshot("overview with cross-references")
    return store


@pytest.fixture(scope="session")
def conversation() -> Conversation:
    return conv50()


@pytest.fixture(scope="session")
def conv50_store(tmp_path_factory: pytest.TempPathFactory, conversation: Conversation) -> Store:
    return build_conv50_store(tmp_path_factory.mktemp("conv50") / "memories", conversation)


@dataclass
class Served:
    """An app listening on loopback: its base URL and token."""

    base: str
    token: str

    def url(self, path: str = "/") -> str:
        """``path`` on the server as is (for requests that bear the token in a header)."""
        return self.base + path

    def page(self, path: str = "/") -> str:
        """``path`` as a browser opens it: behind the token, as in the URL memdir prints."""
        return f"{self.base}/{self.token}{path}"


@pytest.fixture(scope="session")
def serve_catalog() -> Iterator[object]:
    """Start servers for catalogs; every one is stopped at the end of the session."""
    servers: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(catalog: Catalog) -> Served:
        token = secrets.token_urlsafe(32)
        config = uvicorn.Config(browse_app(catalog, token=token), host="127.0.0.1", port=0,
                                log_level="warning", lifespan="off")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 20
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the browser app did not start within 20 s")
            time.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        servers.append((server, thread))
        return Served(f"http://127.0.0.1:{port}", token)

    yield start
    for server, thread in servers:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def store_site(serve_catalog: object, conv50_store: Store, conversation: Conversation) -> Served:
    catalog = open_target(conv50_store.root, conversation=conversation)
    return serve_catalog(catalog)  # type: ignore[operator,no-any-return]


@pytest.fixture(scope="session")
def chrome() -> Iterator[object]:
    """Headless Chromium driven through chromedriver; skips where either is absent."""
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("chromium and chromedriver are not installed (apt-get install chromium "
                    "chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="memdir-chrome-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
