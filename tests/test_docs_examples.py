"""Every example in README.md and docs/*.md runs as written.

Python blocks run as scripts (``python example.py``) in a fresh interpreter from
the repository root, with no ``MEMDIR_*`` variable set except ``MEMDIR_DATA_DIR``
for the examples that read benchmark data (``../shared/data``; they skip where
it is absent). Shell blocks (``sh``, ``bash``, ``console``) run line by line in a
fresh temporary folder; a leading ``uv run memdir`` or ``memdir`` runs this
checkout's command line (``python -m memdir``), which is what both mean after
the README's set-up, and ``git`` and ``mkdir`` lines run as written. A console
block's lines are its ``$ `` lines, or ``[name] $ `` in a session of two terminals.
A block that cannot run here (it downloads data, works for hours, or shows a
synopsis with placeholders) says so on the line above its fence, as
``<!-- not run: REASON -->``. Other marks on that line: ``<!-- file: NAME -->``
(a block a person saves as NAME; the test writes it into the folder of every later
block of the doc), ``<!-- run after: the shell block above -->`` (the block goes on
from the one before: its lines run first, in the same folder) and ``<!-- run with:
the server of the block above -->`` (a client block, run while that block's server
line serves, started and stopped by the test).

Placeholders are filled by the test: the data folder the docs call
``~/memdir-data`` or ``../shared/data`` is ``../shared/data`` (examples that read
it skip where it is absent), the run folders a block names without making them
(``runs/offline-smoke``, ``runs/skills-grid``) are small runs of the same kind
made once per session (the offline smoke run docs/study.md makes is made once too,
by the same line, with a generous tool time limit, and shared with the test of its
figures: tests/offline_smoke.py), a fixed server port is a free one (the same one throughout
a block), and ``./memories``,
where a block uses a store it does not make, is the sample store. A line naming
an OpenAI model runs against a fake OpenAI server on loopback
(tests/docs_model.py) with a dummy key; a line that starts a server (``memdir
browse``, ``memdir serve --transport http``, ``inspect view``) runs until it
answers one request and is then stopped with Ctrl-C; a ``git daemon`` line (a
terminal of its own) serves the rest of its block and is stopped when it ends.
A line ending in ``# exits N`` must exit N; every other line must exit 0, except
that a line stopped by the data check for a file ``../shared/data`` lacks
(PersonaMem's contexts) skips the example, saying so.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

import offline_smoke
from docs_model import FakeOpenAIServer
from interrupting import default_sigint
from offline_smoke import OfflineSmokeRun

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<before>[^\n]*)\n```(?P<lang>\w+)\n(?P<body>[\s\S]*?)^```$", re.M)
NOT_RUN = re.compile(r"<!-- not run: (?P<reason>.+?) -->\s*$")
WITH_SERVER = re.compile(r"<!-- run with: the server of the block above -->\s*$")
"""Marks a client block: it runs while the server line of the shell block before it serves."""
AFTER = re.compile(r"<!-- run after: the shell block above -->\s*$")
"""Marks a block that goes on from the one before it: that block's lines run first."""
FILE = re.compile(r"<!-- file: (?P<name>[\w.-]+) -->\s*$")
"""Marks a block whose text a person saves as the named file, for a later block to use."""
PROMPT = re.compile(r"^(?:\[[\w -]+\] )?\$ ")
"""A console block's prompt: ``$ `` or, in a session of two terminals, ``[laptop] $ ``."""
SHELL = {"sh", "bash", "console"}
NEEDS_DATA = ("MEMDIR_DATA_DIR", "shared/data", "get_settings().data_dir", "configs/")
"""An example naming one of these reads the benchmark data (a shipped config reads it too)."""
NEEDS_KEY = re.compile(r"(\bMEMDIR_MODEL=|--model[ =]|-m )(?!memdir/|mockllm/)\S+")
SERVER = re.compile(r"^(?:[A-Z_]+=\S+ )*(?:(?:uv run )?memdir (?:browse\b"
                    r"|serve\b.*--transport http)|inspect view\b)")
BACKGROUND = re.compile(r"^git daemon\b")
"""A server a person leaves running in a terminal of its own while the block goes on."""
EXITS = re.compile(r"#\s*exits (\d+)")
MISSING_FILE = re.compile(r"^error: .*: not found; put the \w+ files there", re.M)
"""The data check's error for a benchmark file the data folder lacks (its hint follows)."""
TIMEOUT = 900
"""A bound per command: the offline smoke run takes minutes on a busy machine."""
DATA_NAMES = ("~/memdir-data", "../shared/data")
"""How the docs name the benchmark data folder; the test puts ``../shared/data`` there."""


@dataclass(frozen=True)
class Example:
    doc: Path
    line: int
    lang: str
    body: str
    skip: str | None
    files: tuple[tuple[str, str], ...] = ()
    """(name, text) of the files the doc asks a person to save before this block."""
    server: str | None = None
    """The server line a client block runs beside (the shell block before it starts it)."""
    after: tuple[str, ...] = ()
    """The lines of the shell block this one goes on from, run first in the same folder."""

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(REPO)}:{self.line}"


def _examples() -> list[Example]:
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        files: list[tuple[str, str]] = []
        for match in FENCE.finditer(text):
            lang = match["lang"]
            before = match["before"].rsplit("\n", 1)[-1]
            if (saved := FILE.search(before)) is not None:
                files.append((saved["name"], match["body"]))
                continue
            if lang != "python" and lang not in SHELL:
                continue
            marked = NOT_RUN.search(before)
            line = text.count("\n", 0, match.start("lang")) + 1
            server, after = None, ()
            shell = [e for e in found if e.doc == doc and e.lang in SHELL]
            if WITH_SERVER.search(before):
                servers = [c for c in _commands(shell[-1]) if SERVER.match(c)] if shell else []
                assert servers, f"{doc.name}:{line}: no server line in the block above"
                server = servers[-1]
            if AFTER.search(before):
                assert shell, f"{doc.name}:{line}: no shell block above to go on from"
                after = (*shell[-1].after, *_commands(shell[-1]))
            found.append(Example(doc, line, lang, match["body"],
                                 marked["reason"] if marked else None, tuple(files), server,
                                 after))
    return found


MADE_RUNS = ("runs/offline-smoke", "runs/skills-grid")
"""The run folders :func:`made_runs` makes for the blocks that name them."""


WHOLE_STUDY = re.compile(r"\bmemdir study run\b(?!.*--dry-run)")
"""A line that runs a whole study: its block is a slow test (about a minute)."""


def _param(example: Example) -> object:
    """``example`` as a test case, marked for the test run's scheduling.

    Blocks that read :func:`made_runs` run on one pytest-xdist worker: the
    fixture runs a small study and a skills cell (tens of seconds), which every
    worker that ran such a block would make again. A block that runs a whole
    study is marked slow, so that it starts early (tests/conftest.py).
    """
    marks = []
    if example.skip is None and _reads_made_runs(example):
        marks.append(pytest.mark.xdist_group("made_runs"))
    if example.skip is None and _runs_offline_smoke(example):
        marks.append(pytest.mark.xdist_group(offline_smoke.GROUP))
    if example.skip is None and any(WHOLE_STUDY.search(c) for c in _commands(example)):
        marks.append(pytest.mark.slow)
    return pytest.param(example, id=example.id, marks=marks)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    if DATA.is_dir():
        env["MEMDIR_DATA_DIR"] = str(DATA)
    return env


@pytest.fixture(scope="session")
def fake_openai() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture(scope="session")
def made_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Small runs standing in for the run folders a block names without making them."""
    if not DATA.is_dir():
        return {}
    runs: dict[str, Path] = {}
    from memdir.study import StudyConfig, run_study, write_report

    study = tmp_path_factory.mktemp("offline-smoke")
    config = StudyConfig.model_validate({
        "name": "offline-smoke", "data_dir": str(DATA),
        "benchmarks": [{"name": "locomo", "conversations": ["conv-50"], "limit": 5}],
        "variants": ["closed-book", "verbatim"], "search": {"models": ["memdir/grep-reader"]},
    })
    run_study(config, study)
    write_report(study)
    runs[MADE_RUNS[0]] = study
    from memdir.skills import alfworld_missing

    split = DATA / "alfworld" / "valid_seen"
    if alfworld_missing() is None and split.is_dir():
        import asyncio

        from memdir.skills import AlfworldEnv, RunConfig, list_tasks, run_cell

        grid = tmp_path_factory.mktemp("skills-grid")
        tasks = list_tasks(split)
        game = "pick_two_obj_and_place-ToiletPaper-None-Toilet-408"
        skills = RunConfig(name="skills-grid", data=split, output=grid,
                           variants=["episode_log_recent"], episode_k=1,
                           task_ids=[t.task_id for t in tasks if t.task_id.startswith(game)])
        env = AlfworldEnv(max_steps=skills.max_steps, facts=True,
                          cache_dir=tmp_path_factory.mktemp("alfworld-cache"))
        asyncio.run(run_cell(skills, skills.cells()[0], tasks, env))
        runs[MADE_RUNS[1]] = grid
    return runs


def _reads_made_runs(example: Example) -> bool:
    """Whether ``example`` names a run of :func:`made_runs` without making it itself."""
    commands = _commands(example)
    return any(name in example.body and not any(f"--out {name}" in c for c in commands)
               for name in MADE_RUNS)


def _is_offline_smoke(line: str) -> bool:
    """Whether a filled shell line is docs/study.md's offline smoke run (tests/offline_smoke.py)."""
    words = shlex.split(line, comments=True)
    if words[:3] == ["uv", "run", "memdir"]:
        words = words[3:]
    elif words[:1] == ["memdir"]:
        words = words[1:]
    else:
        return False
    return tuple(words) == offline_smoke.ARGS


def _runs_offline_smoke(example: Example) -> bool:
    return example.lang in SHELL and any(_is_offline_smoke(_filled(c))
                                         for c in _commands(example))


def _run_line(line: str, cwd: Path, env: dict[str, str],
              request: pytest.FixtureRequest) -> subprocess.CompletedProcess[str]:
    """Run a filled shell line in ``cwd``; the offline smoke run is the session's one.

    That study's whole run is made once, for its block and for the test of the
    figures docs/study.md gives (tests/offline_smoke.py), by the same line in a fresh
    folder like ``cwd``; ``cwd`` gets a copy of the run for the block's next lines.
    """
    if not _is_offline_smoke(line):
        return _run(_as_this_checkout(line), cwd, env)
    shared: OfflineSmokeRun = request.getfixturevalue("offline_smoke_run")
    if shared.run.is_dir():
        shutil.copytree(shared.run, cwd / offline_smoke.OUT, symlinks=True)
    return shared.done


def _run(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a shell line in a session of its own, so that a line that hangs is stopped whole."""
    process = subprocess.Popen(line, shell=True, cwd=cwd, env=env,  # noqa: S602
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return subprocess.CompletedProcess(line, process.returncode, out, err)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _filled(command: str, ports: dict[str, str] | None = None) -> str:
    """``command`` with the docs' placeholders filled (see the module's docstring).

    A fixed port (``--port 7575``, ``--port=9418``, ``127.0.0.1:9418``) becomes a free
    one, the same free one wherever ``ports`` (one block's) has seen the number before.
    """
    ports = {} if ports is None else ports
    for name in DATA_NAMES:
        command = command.replace(name, str(DATA))

    def port(match: re.Match[str]) -> str:
        number = ports.setdefault(match["port"], str(_free_port()))
        return f"{match['before']}{number}"

    return re.sub(r"(?P<before>--port[ =]|127\.0\.0\.1:)(?P<port>\d{4,5})\b", port, command)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _serve_once(command: str, cwd: Path, env: dict[str, str]) -> None:
    """Start a server line, wait until it answers one request, then stop it with Ctrl-C."""
    words = shlex.split(command, comments=True)
    env = dict(env)
    while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    if words[:2] == ["inspect", "view"]:
        words = [sys.executable, "-m", "inspect_ai", *words[1:]]
    port = int(words[words.index("--port") + 1]) if "--port" in words else 7575
    if words[1:3] == ["-m", "inspect_ai"]:
        assert not _listening(port), f"port {port} is taken: inspect view cannot start"
    process = subprocess.Popen(words, cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, preexec_fn=default_sigint)
    output: list[str] = []
    try:
        assert process.stdout is not None
        url = None
        deadline = time.monotonic() + TIMEOUT
        os.set_blocking(process.stdout.fileno(), False)
        while url is None and time.monotonic() < deadline and process.poll() is None:
            line = process.stdout.readline()
            output.append(line)
            if line.startswith("open http://"):
                url = line.split()[1]
            elif "browse" not in words and _listening(port):
                url = f"http://127.0.0.1:{port}/"
            time.sleep(0.05 if line else 0.2)
        assert url is not None, f"{command} never listened:\n{''.join(output)}"
        answer = httpx.get(url, timeout=60, follow_redirects=True)
        assert answer.status_code < 500, (command, answer.status_code)
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=60)
        # memdir's servers exit 130 (or 0); inspect view, inspect_ai's own, exits 1.
        allowed = (0, 1, 130) if words[1:3] == ["-m", "inspect_ai"] else (0, 130)
        assert code in allowed, f"{command} exited {code} on Ctrl-C:\n{''.join(output)}"
    finally:
        process.kill()
        process.wait()


@contextmanager
def _in_background() -> Iterator[Callable[[str, Path, dict[str, str]], None]]:
    """Start a block's background servers (``git daemon`` of a second terminal); stop them
    all, whole, when the block ends however it ends."""
    started: list[subprocess.Popen[bytes]] = []

    def start(line: str, cwd: Path, env: dict[str, str]) -> None:
        port = re.search(r"--port[ =](\d+)", line)
        assert port is not None, f"a background server names its port: {line}"
        process = subprocess.Popen(line, shell=True, cwd=cwd, env=env,  # noqa: S602
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, start_new_session=True)
        started.append(process)
        deadline = time.monotonic() + 60
        while not _listening(int(port[1])):
            assert process.poll() is None, f"{line} exited {process.returncode}"
            assert time.monotonic() < deadline, f"{line} never listened"
            time.sleep(0.1)

    try:
        yield start
    finally:
        for process in started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)


def _commands(example: Example) -> list[str]:
    """The shell lines of a block: ``$ `` lines of a console block, every line of a script."""
    lines = example.body.splitlines()
    if example.lang == "console":
        lines = [line[m.end():] for line in lines if (m := PROMPT.match(line))]
    joined: list[str] = []
    for line in lines:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + " " + line.strip()
        elif line.strip() and not line.lstrip().startswith("#"):
            joined.append(line.strip())
    return joined


def _as_this_checkout(command: str) -> str:
    words = shlex.split(command, comments=True)
    if words[:1] in (["git"], ["mkdir"]):  # a program of its own: as written
        return command
    if len(words) > 2 and words[-2] == "<":  # stdin from a file the doc had saved
        return f"{_as_this_checkout(shlex.join(words[:-2]))} < {shlex.quote(words[-1])}"
    if "|" in words:  # a pipe: each side on its own
        at = words.index("|")
        return (_as_this_checkout(shlex.join(words[:at])) + " | "
                + _as_this_checkout(shlex.join(words[at + 1:])))
    if words[:1] in (["echo"], ["cat"], ["printf"]):
        return shlex.join(words)
    env = []
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        env.append(words.pop(0))
    if words[:3] == ["uv", "run", "memdir"]:
        words = words[3:]
    elif words[:1] == ["memdir"]:
        words = words[1:]
    else:
        raise AssertionError(f"not a memdir command (mark the block not run): {command}")
    return shlex.join([*env, sys.executable, "-m", "memdir", *words])


EXAMPLES = _examples()


@pytest.mark.parametrize("example", [_param(e) for e in EXAMPLES])
def test_the_example_runs_as_written(example: Example, tmp_path: Path,
                                     fake_openai: FakeOpenAIServer,
                                     request: pytest.FixtureRequest) -> None:
    if example.skip is not None:
        assert len(example.skip) > 10, f"{example.id}: say why the block is not run"
        pytest.skip(f"not run: {example.skip}")
    if any(needle in example.body for needle in (*NEEDS_DATA, *DATA_NAMES, "runs/")) \
            and not DATA.is_dir():
        pytest.skip("the benchmark data (../shared/data) is not on this machine")
    env = _env()
    if example.lang == "python":
        script = tmp_path / "example.py"
        ports: dict[str, str] = {}
        with _in_background() as start:
            if example.server is not None:  # in its own folder, on a free port
                served = tmp_path / "server"
                served.mkdir()
                if "./memories" in example.server:
                    from memdir.sample import build_sample_store

                    build_sample_store(served / "memories")
                start(_as_this_checkout(_filled(example.server, ports)), served, env)
            script.write_text(_filled(example.body, ports), encoding="utf-8")
            done = subprocess.run([sys.executable, str(script)], cwd=REPO, env=env,
                                  capture_output=True, text=True, timeout=TIMEOUT, check=False)
        assert done.returncode == 0, f"{example.id}:\n{done.stdout}\n{done.stderr}"
        return
    (tmp_path / "configs").symlink_to(REPO / "configs")  # as in the repository's root
    commands = _commands(example)
    assert commands, f"{example.id}: no command found in the block (a prompt not read?)"
    # made only for a block that reads one of its runs (they take tens of seconds)
    made_runs: dict[str, Path] = (request.getfixturevalue("made_runs")
                                  if _reads_made_runs(example) else {})
    for name, made in made_runs.items():  # a run the block names but does not make
        if name in example.body and not any(f"--out {name}" in c for c in commands):
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).symlink_to(made)
    if "./memories" in example.body and not any("init ./memories" in c for c in commands):
        from memdir.sample import build_sample_store

        build_sample_store(tmp_path / "memories")  # "your store": the sample one
    env |= {"OPENAI_API_KEY": "docs-test-dummy-key", "OPENAI_BASE_URL": fake_openai.base_url}
    for name, text in example.files:  # the files the doc asked a person to save
        (tmp_path / name).write_text(text, encoding="utf-8")
    ran = 0
    ports: dict[str, str] = {}
    with _in_background() as start:
        for command in (*example.after, *commands):
            line = _filled(command, ports)
            if SERVER.match(line):
                _serve_once(_as_this_checkout(line) if "memdir" in line.split("#")[0] else line,
                            tmp_path, env)
            elif BACKGROUND.match(line):
                start(line, tmp_path, env)
            else:
                expected = int(found[1]) if (found := EXITS.search(command)) else 0
                done = _run_line(line, tmp_path, env, request)
                if done.returncode == 2 and MISSING_FILE.search(done.stderr) and expected == 0:
                    pytest.skip(f"../shared/data lacks a benchmark file {command!r} reads: "
                                f"{done.stderr.strip().splitlines()[0]}")
                assert done.returncode == expected, (
                    f"{example.id}: {command}\n{done.stdout}\n{done.stderr}")
            ran += 1
    assert ran == len(example.after) + len(commands), f"{example.id}: {ran} command(s) ran"


def test_the_harness_finds_the_examples() -> None:
    ids = {e.id.split(":")[0] for e in EXAMPLES}
    assert {"README.md", "docs/cli.md", "docs/agents.md", "docs/metrics.md"} <= ids, ids
    library = [e for e in EXAMPLES
               if e.lang == "python" and e.doc.name in {"agents.md", "metrics.md"}]
    assert len(library) >= 3 and all(e.skip is None for e in library)


def test_a_line_that_needs_a_provider_is_recognised() -> None:
    assert NEEDS_KEY.search("memdir judge calibrate --model openai/gpt-5.4-mini")
    assert NEEDS_KEY.search("MEMDIR_MODEL=anthropic/claude memdir ask ./m 'q'")
    assert not NEEDS_KEY.search("memdir ask ./m 'q' --model memdir/grep-reader")


def test_a_memdir_line_becomes_this_checkout() -> None:
    line = _as_this_checkout("MEMDIR_X=1 uv run memdir tree ./m   # a comment")
    assert line == shlex.join(["MEMDIR_X=1", sys.executable, "-m", "memdir", "tree", "./m"])


def test_a_session_of_two_terminals_runs_every_prompt() -> None:
    body = "[laptop] $ memdir tree a\n/memories/\n[desk two] $ memdir sync b\n$ memdir x\n"
    block = Example(REPO / "docs" / "x.md", 1, "console", body, None)
    assert _commands(block) == ["memdir tree a", "memdir sync b", "memdir x"]


def test_fixed_ports_become_one_free_port_per_block() -> None:
    ports: dict[str, str] = {}
    first = _filled("git daemon --port=9418 --listen=127.0.0.1", ports)
    second = _filled("memdir clone git://127.0.0.1:9418/team.git ./one", ports)
    [port] = ports.values()
    assert port != "9418" and f"--port={port} " in first and f"127.0.0.1:{port}/" in second
    assert _filled("memdir serve m --port 8765", ports) != f"memdir serve m --port {port}"


def test_stdin_from_a_saved_file_stays_a_redirection() -> None:
    line = _as_this_checkout("memdir tool laptop --set write - < resolve.json  # the call")
    assert line == shlex.join([sys.executable, "-m", "memdir", "tool", "laptop", "--set",
                               "write", "-"]) + " < resolve.json"
    assert _as_this_checkout("git init -q --bare memory/team.git") == (
        "git init -q --bare memory/team.git")
