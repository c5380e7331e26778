#!/usr/bin/env bash
# Install everything (first run) and run lint, the strict type check and the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v uv >/dev/null 2>&1; then
  # Debian's and Ubuntu's python3 refuse pip installs (PEP 668): uv then goes into a
  # private virtual environment of this checkout.
  python3 -m pip install --quiet uv 2>/dev/null || {
    python3 -m venv .cache/uv && .cache/uv/bin/pip install --quiet uv
    export PATH="$PWD/.cache/uv/bin:$PATH"
  }
fi
uv sync --locked --extra alfworld
# bubblewrap is the shell tool's preferred sandbox; without it the shell tests use
# unshare, or skip with a reason where neither can run.
if ! command -v bwrap >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq bubblewrap
fi
# ripgrep is an anchor of the grep rows of benchmarks/scale.py (beside GNU grep).
if ! command -v rg >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq ripgrep
fi
# The MCP Inspector (the MCP project's reference client) checks `memdir serve` in
# tests/server/test_inspector.py; those tests skip where npm is missing.
if command -v npm >/dev/null 2>&1 && [ ! -x .cache/mcp-inspector/node_modules/.bin/mcp-inspector ]; then
  npm install --silent --no-audit --no-fund --prefix .cache/mcp-inspector \
    @modelcontextprotocol/inspector@2.12.0
fi
# Debian's chromium and its driver run the browser tests (memdir browse); where neither
# is installed nor installable (no root, no apt-get) those tests skip with a reason.
if ! command -v chromedriver >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq chromium chromium-driver
fi
uv run --no-sync ruff check .
uv run --no-sync mypy
# The tests run on every core (pytest-xdist; 2 on CI's machine); tests marked with one
# xdist_group share an expensive session fixture and run on one worker. The user's own
# arguments come after, so `bash scripts/test.sh -n 0` runs them in one process.
uv run --no-sync pytest -n auto --dist loadgroup "$@"
