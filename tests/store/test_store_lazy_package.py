"""``memdir.store`` loads each submodule the first time one of its names is used."""

from __future__ import annotations

import subprocess
import sys

import memdir.store


def _loaded_after(code: str) -> set[str]:
    probe = (f"import sys\n{code}\n"
             "print(' '.join(sorted(m for m in sys.modules if m.startswith('memdir.store.')"
             " or m in ('pydantic', 'yaml'))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    return set(out.split())


def test_every_exported_name_is_found_kept_and_listed() -> None:
    names = memdir.store.__all__
    assert set(names) <= set(dir(memdir.store))
    for name in names:
        value = getattr(memdir.store, name)
        assert memdir.store.__dict__[name] is value  # later lookups skip the loader


def test_importing_the_package_loads_no_submodule() -> None:
    assert _loaded_after("import memdir.store") == set()


def test_opening_a_store_loads_neither_lint_nor_the_header_models() -> None:
    loaded = _loaded_after("from memdir.store import Store, StoreError, ROOT")
    assert "memdir.store._store" in loaded and "memdir.store._errors" in loaded
    assert not loaded & {"memdir.store._lint", "memdir.store._models", "pydantic"}


def test_a_name_the_package_does_not_export_is_an_attribute_error() -> None:
    try:
        memdir.store.nope  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "module 'memdir.store' has no attribute 'nope'" in str(exc)
    else:
        raise AssertionError("memdir.store.nope was found")
