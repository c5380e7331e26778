#!/usr/bin/env bash
# Install everything (first run) and run lint, the strict type check and the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v uv >/dev/null 2>&1 || python3 -m pip install --quiet uv
uv sync --locked
uv run ruff check .
uv run mypy
uv run pytest "$@"
