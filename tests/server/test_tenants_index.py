"""The tenants file through its index: start-up without parsing, edits seen while serving.

A server looks a token up in a SQLite index of the tenants file kept beside it, made
once per version of the file; these tests check the index answers as the file does,
is rebuilt whenever the file's bytes change (an edit made while serving included),
never serves a file that does not load, and that ``--sync`` opens a tenant's syncer
with its tools, not at start.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path

import pytest

from memdir.server import TenantIndex, TenantsError, add_tenant, hash_token, load_tenants
from memdir.server._tenants import index_path


def _file(tmp_path: Path, count: int) -> Path:
    file = tmp_path / "tenants.yaml"
    file.write_text("tenants:\n" + "".join(
        f"  t{n}:\n    token_sha256: {hashlib.sha256(str(n).encode()).hexdigest()}\n"
        f"    store: s{n % 7}\n    toolset: write\n    access: {'write' if n % 2 else 'read'}\n"
        f"    max_files: {100 + n}\n" for n in range(count)))
    return file


def test_the_index_answers_as_the_file_does_and_a_second_start_does_not_parse(
        tmp_path: Path) -> None:
    file = _file(tmp_path, 300)
    first = TenantIndex(file)
    assert first.builds == 1 and index_path(file).is_file()
    assert oct(index_path(file).stat().st_mode & 0o777) == "0o600"
    second = TenantIndex(file)
    assert second.builds == 0  # the index made by the first start, checked by the file's hash
    for tenant in load_tenants(file):
        assert second.get(tenant.token_sha256) == tenant
    assert second.get(hash_token("not a token")) is None
    assert (second.count, second.stores) == (300, 7)
    first.close()
    second.close()


def test_an_edit_is_served_after_the_check_and_a_removed_token_stops(tmp_path: Path) -> None:
    file = tmp_path / "tenants.yaml"
    ann = add_tenant(file, "ann", store="ann", toolset="write", access="write")
    index = TenantIndex(file, check_seconds=0.0)
    assert index.get(hash_token(ann)) is not None
    text = file.read_text()
    ben = add_tenant(file, "ben", store="ben", toolset="read", access="read")
    file.write_text(file.read_text().replace(text.split("token_sha256: ")[1].split("\n")[0],
                                             "f" * 64))  # ann's token revoked
    deadline = time.monotonic() + 30
    while index.get(hash_token(ben)) is None:  # the rebuild runs on a thread of its own
        assert time.monotonic() < deadline, "the edit was never served"
        time.sleep(0.05)
    assert index.get(hash_token(ann)) is None
    assert index.reload() is False  # nothing changed since
    index.close()


def test_an_edit_keeping_size_and_mtime_is_still_seen(tmp_path: Path) -> None:
    file = tmp_path / "tenants.yaml"
    add_tenant(file, "ann", store="ann", toolset="write", access="write")
    index = TenantIndex(file)
    before = file.stat()
    text = file.read_text()
    file.write_text(text.replace("store: ann", "store: bob"))  # same size
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert index.reload() is True
    assert _builds(file) == 0  # the new index serves the next start too
    assert load_tenants(file)[0] == index.get(load_tenants(file)[0].token_sha256)
    index.close()


def test_a_file_that_no_longer_loads_keeps_the_tenants_served(tmp_path: Path) -> None:
    file = tmp_path / "tenants.yaml"
    ann = add_tenant(file, "ann", store="ann", toolset="write", access="write")
    index = TenantIndex(file)
    good = file.read_bytes()
    file.write_bytes(good + b"  broken: [\n")
    with pytest.raises(TenantsError, match="tenants.yaml"):
        index.reload()
    assert index.get(hash_token(ann)) is not None  # still the last file that loaded
    with pytest.raises(TenantsError, match="tenants.yaml"):
        _builds(file)  # a start on a broken file is refused, as before
    index.close()


def test_an_index_that_does_not_match_the_file_is_rebuilt(tmp_path: Path) -> None:
    file = _file(tmp_path, 20)
    TenantIndex(file).close()
    stale = index_path(file).read_bytes()
    file.write_text(file.read_text().replace("toolset: write", "toolset: read"))
    index_path(file).write_bytes(stale)  # an index of the file as it was
    index = TenantIndex(file)
    assert index.builds == 1
    assert all(index.get(t.token_sha256) == t for t in load_tenants(file))
    index_path(file).write_bytes(b"not a database")
    assert _builds(file) == 1
    index.close()


def test_a_folder_that_cannot_be_written_keeps_the_index_in_memory(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes any folder")
    folder = tmp_path / "ro"
    folder.mkdir()
    file = _file(folder, 5)
    folder.chmod(0o500)
    try:
        index = TenantIndex(file)
        assert index.get(load_tenants(file)[0].token_sha256) is not None
        assert not index_path(file).exists()
        index.close()
    finally:
        folder.chmod(0o700)


def _builds(file: Path) -> int:
    """How many parses a new start of a server on ``file`` makes (0: it used the index)."""
    index = TenantIndex(file)
    index.close()
    return index.builds


def _git(*args: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", *args], cwd=cwd, env={**env, "GIT_CONFIG_NOSYSTEM": "1",
                          "GIT_CONFIG_GLOBAL": os.devnull}, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_sync_starts_with_a_tenants_tools_and_stops_with_them(tmp_path: Path) -> None:
    from memdir.cli._tenant_serve import _Syncing
    from memdir.server import Tenant
    from memdir.store import Store
    from memdir.store.replica import Replica

    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    stores = tmp_path / "stores"
    replica = Replica(Store(stores / "ann", create=True), name="ann")
    replica.attach(str(remote))
    Store(stores / "plain", create=True)
    hooks = _Syncing(60.0)
    ann = Tenant("ann", "0" * 64, "ann", "write", "write")
    reader = Tenant("ann-reader", "1" * 64, "ann", "read", "read")
    plain = Tenant("plain", "2" * 64, "plain", "write", "write")
    assert hooks._syncers == {}  # nothing at start
    store = Store(stores / "ann")
    hooks.opened(ann, store)
    hooks.opened(reader, Store(stores / "ann"))
    hooks.opened(plain, Store(stores / "plain"))
    assert list(hooks._syncers) == [store.root]  # one per replica store in use
    syncer = hooks._syncers[store.root][0]
    deadline = time.monotonic() + 60
    while syncer.syncs < 1:  # the first sync runs on the syncer's thread, not the request's
        assert time.monotonic() < deadline, "the first sync never ran"
        time.sleep(0.05)
    store.create("/memories/a.md", "---\nname: a\ndescription: a\n---\n# a\n")
    hooks.wrote(ann, store)
    hooks.closed(reader, store)
    assert store.root in hooks._syncers  # ann still has it open
    hooks.closed(ann, store)
    assert hooks._syncers == {}
    shown = _git("log", "--format=%an", "main", cwd=remote)
    assert "token ann" in shown  # the last sync carried the write, naming its tenant
