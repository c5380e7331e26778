"""Fixtures of the tool tests."""

from __future__ import annotations

import pytest

from memdir.tools._sandbox import Backend, available_backends

WORKING = available_backends()


@pytest.fixture(params=["bwrap", "unshare"])
def backend(request: pytest.FixtureRequest) -> Backend:
    """Each confinement that works here (the others skip, saying what to install)."""
    name: Backend = request.param
    if name not in WORKING:
        pytest.skip(f"the {name} confinement does not work on this machine "
                    "(install bubblewrap, or allow user namespaces)")
    return name
