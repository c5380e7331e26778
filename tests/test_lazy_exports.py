"""Packages that export names from submodules loaded on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import memdir.server
import memdir.tools


@pytest.mark.parametrize("package", [memdir.server, memdir.tools])
def test_every_listed_name_is_found_and_then_kept(package: object) -> None:
    names = package.__all__  # type: ignore[attr-defined]
    assert set(names) <= set(dir(package))
    for name in names:
        value = getattr(package, name)
        assert package.__dict__[name] is value  # later lookups skip the loader


@pytest.mark.parametrize("package", ["memdir.server", "memdir.tools"])
def test_an_unknown_name_is_an_attribute_error_naming_it(package: str) -> None:
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'nope'"):
        sys.modules[package].nope  # noqa: B018


def test_importing_the_server_package_leaves_the_mcp_sdk_unloaded() -> None:
    code = ("import sys, memdir.server, memdir.tools; "
            "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.strip() == "[]"
