"""Spawning a child that a test stops with Ctrl-C (SIGINT).

A shell that starts a job in the background (``( bash scripts/test.sh & )``)
sets SIGINT to be ignored, and an ignored signal stays ignored across
``exec``: the memdir child would then never see the test's Ctrl-C. Passed as
``preexec_fn``, :func:`default_sigint` gives the child the default handler
back, so Python in it turns SIGINT into ``KeyboardInterrupt`` as it does in a
terminal. The test process itself keeps what its launcher chose.
"""

from __future__ import annotations

import signal

__all__ = ["default_sigint"]


def default_sigint() -> None:
    """In the child, between fork and exec: SIGINT gets its default action again."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
