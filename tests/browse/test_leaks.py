"""The browser's token, attacked as a local user would: from a memory file, in real Chromium.

Any local user can listen on a loopback port. A memory file that names such a
port (an image, a link) must make Chromium send it nothing at all while the page
loads, and a request the user makes by following the link must carry nothing
that opens the browser's pages.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from memdir.browse import open_target
from memdir.store import Store

from .conftest import Served

pytestmark = pytest.mark.slow


class Listener:
    """A loopback TCP server recording the raw bytes of every connection it gets."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port: int = self.sock.getsockname()[1]
        self.requests: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                data = b""
                try:
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                except TimeoutError:
                    pass
                if data:
                    self.requests.append(data)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                 b"Content-Length: 2\r\nConnection: close\r\n\r\nok")

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    try:
        yield found
    finally:
        found.close()


def _lure(port: int) -> str:
    return (f"---\nname: lure\ndescription: A note that points at another local port\n---\n"
            f"# Lure\n\n![pixel](http://127.0.0.1:{port}/pixel.png)\n\n"
            f"![same host name](http://localhost:{port}/named.png)\n\n"
            f"[the port's page](http://127.0.0.1:{port}/clicked)\n")


def test_a_memory_file_makes_chromium_send_nothing_to_another_port(
        chrome: Any, serve_catalog: Any, tmp_path: Any, listener: Listener) -> None:
    from selenium.webdriver.common.by import By

    store = Store(tmp_path / "memories", create=True)
    store.create("/memories/lure.md", _lure(listener.port))
    site: Served = serve_catalog(open_target(store.root))
    chrome.delete_all_cookies()
    chrome.get(site.page("/s/store/file/lure.md"))
    assert chrome.find_element(By.CSS_SELECTOR, ".filehead h1").text == "lure"
    time.sleep(1.5)  # give any image request time to arrive
    assert listener.requests == [], listener.requests  # the CSP kept both images from loading
    assert chrome.get_cookies() == []  # nothing a browser would send to other ports

    # The user follows the link: that request reaches the listener, carrying nothing usable.
    chrome.find_element(By.LINK_TEXT, "the port's page").click()
    deadline = time.monotonic() + 20
    while not listener.requests:
        assert time.monotonic() < deadline, "the link was never followed"
        time.sleep(0.05)
    raw = listener.requests[0].decode("latin-1")
    assert raw.startswith("GET /clicked ")
    assert site.token not in raw
    headers = dict(line.split(": ", 1) for line in raw.split("\r\n")[1:] if ": " in line)
    assert "Cookie" not in headers and "Referer" not in headers, headers
    # Replayed against the browser, none of what it got opens a page.
    replay = {k: v for k, v in headers.items() if k.lower() not in ("host", "connection")}
    for path in ("/", "/s/store/", "/s/store/file/lure.md"):
        assert httpx.get(site.url(path), headers=replay, timeout=30).status_code == 401
