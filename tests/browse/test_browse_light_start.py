"""A browser of plain stores starts without the run readers, inspect_ai or the MCP SDK."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_HEAVY = ("inspect_ai", "mcp", "memdir.agents", "memdir.study", "memdir.skills")


def test_a_plain_store_session_loads_none_of_the_run_readers(tmp_path: Path) -> None:
    root = tmp_path / "s"
    subprocess.run([sys.executable, "-m", "memdir", "init", str(root)], check=True,
                   capture_output=True, timeout=120)
    code = ("import sys\nfrom pathlib import Path\n"
            "from starlette.testclient import TestClient\n"
            "from memdir.browse import open_target\n"
            "from memdir.browse._app import browse_app\n"
            f"catalog = open_target(Path({str(root)!r}))\n"
            "client = TestClient(browse_app(catalog, token=None), base_url='http://127.0.0.1')\n"
            "for url in ('/', '/s/store/', '/s/store/health', '/s/store/search?q=x'):\n"
            "    assert client.get(url).status_code == 200, url\n"
            f"print(sorted(m for m in {_HEAVY!r} if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
