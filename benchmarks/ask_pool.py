"""``ask_many``: many questions answered by a pool of worker processes (benchmark only).

This pool left the library: ``benchmarks/pool_vs_eval.py`` measured it against
what the study does (one inspect_ai eval per cell, ``max_samples`` = the study's
concurrency) and a pool started for a cell was 2.5 to 5 times slower, its
start-up dominating; only a warm pool beat the eval, on models with no latency,
and answering outside the eval would lose the per-sample transcripts. It stays
here for the agent-loop benchmarks, which use it to show what a second core buys.

One event loop can only do so much: each inspect_ai ``generate`` call costs a few
milliseconds of CPU (request preparation, retries set-up, events, usage), so a
few hundred concurrent questions are bound by one core long before the model is
the bottleneck. :class:`AskPool` starts N spawned processes, each with its own
event loop, its own model built from a picklable :class:`ModelSpec`, and its
share of the concurrency, and hands out questions as slots free up. A pool is
started once and reused across batches, so its start-up (importing inspect_ai,
building the model, loading inspect_ai's model database) is paid once per run.

Every answer comes back in input order with its records. A question whose
episode fails is never dropped: the batch raises :class:`PoolError` naming it,
with every other answer attached.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import multiprocessing
import threading
import traceback
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from memdir.agents import (
    OFFLINE_MODEL,
    Answer,
    PriceTable,
    RoleConfig,
    SearchVariant,
    ask,
)
from memdir.store import Store

__all__ = ["AskPool", "ModelSpec", "PoolError", "ask_many"]

_START_TIMEOUT = 120.0
"""Seconds a worker may take to import, build its model and report ready."""


class PoolError(RuntimeError):
    """Questions of a batch failed, or a worker could not start or died.

    Attributes:
        answers: One entry per question in input order; None where it failed.
        failures: Question index to the error text from the worker.
    """

    def __init__(
        self,
        message: str,
        answers: list[Answer | None] | None = None,
        failures: dict[int, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.answers = answers or []
        self.failures = failures or {}


@dataclass(frozen=True)
class ModelSpec:
    """How a worker process builds its model; picklable, unlike a model.

    Give ``name`` (``provider/model``, built with memdir's retry and timeout
    settings and ``args`` as model args) or ``factory`` (``"module:function"``,
    called as ``function(**args)`` and returning an inspect_ai ``Model``; for
    custom providers and mock models). The factory's module must be importable
    in a fresh interpreter with the parent's ``sys.path``.
    """

    name: str | None = None
    factory: str | None = None
    args: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if (self.name is None) == (self.factory is None):
            raise ValueError("a ModelSpec needs exactly one of name= or factory=")
        if self.factory is not None and ":" not in self.factory:
            raise ValueError(
                f"factory {self.factory!r} must be written module:function, "
                "e.g. mypackage.models:make_model"
            )

    def label(self) -> str:
        """The model name, or the factory it comes from."""
        return self.name or f"factory {self.factory}"

    def build(self, max_connections: int) -> Any:
        """The inspect_ai model (called inside the worker)."""
        from memdir.agents import resolve_model

        if self.name is not None:
            return resolve_model(self.name, max_connections=max_connections, **self.args)
        module_name, _, attr = str(self.factory).partition(":")
        make: Callable[..., Any] = getattr(importlib.import_module(module_name), attr)
        return make(**self.args)


@dataclass(frozen=True)
class _Job:
    """What every worker needs to answer questions, sent once at start-up."""

    spec: ModelSpec
    store_root: str | None
    store_bytes: int | None
    variant: SearchVariant
    role: RoleConfig | None
    prices: PriceTable | None
    share: int


def _shares(concurrency: int, workers: int) -> list[int]:
    base, extra = divmod(concurrency, workers)
    return [base + (1 if i < extra else 0) for i in range(workers)]


class AskPool:
    """Worker processes that answer questions from one store with one model.

    Args:
        store: The store (or its folder) to search; None only for ``closed-book``.
        model: ``provider/model``, a :class:`ModelSpec`, or None for the offline
            ``memdir/grep-reader`` policy.
        workers: Processes to start (at least 1).
        concurrency: Questions in flight across all workers; each worker gets
            an equal share (so at least ``workers``).
        variant: The store form, as for :func:`ask`.
        role: Budget and settings, as for :func:`ask`.
        prices: Price table for the costs (the shipped one if None).

    Use it as a context manager, or call :meth:`close`; :meth:`ask_many` starts
    the workers on first use if :meth:`start` was not called.
    """

    def __init__(
        self,
        store: Store | str | Path | None,
        model: str | ModelSpec | None = None,
        *,
        workers: int = 2,
        concurrency: int = 20,
        variant: SearchVariant = "hierarchical",
        role: RoleConfig | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        if concurrency < workers:
            raise ValueError(
                f"concurrency {concurrency} is below workers {workers}: every worker "
                "needs at least one question in flight"
            )
        if isinstance(model, str) or model is None:
            model = ModelSpec(name=model or OFFLINE_MODEL)
        root = store.root if isinstance(store, Store) else store
        limit = store.max_file_bytes if isinstance(store, Store) else None
        self.spec = model
        self._jobs = [
            _Job(model, str(root) if root is not None else None, limit, variant, role, prices,
                 share)
            for share in _shares(concurrency, workers)
        ]
        self._workers: list[_Worker] = []
        self._broken: str | None = None
        self._batch_lock = threading.Lock()  # one batch at a time per pool
        self._finalizer: weakref.finalize[Any, Any] | None = None

    @property
    def workers(self) -> int:
        """How many worker processes the pool runs."""
        return len(self._jobs)

    @property
    def pids(self) -> list[int]:
        """The process ids of the running workers (empty before start and after close)."""
        return [w.process.pid for w in self._workers]

    def __enter__(self) -> AskPool:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the workers and wait until each has built its model and opened the store.

        Raises:
            PoolError: A worker could not start (its error is in the message).
        """
        if self._workers:
            return
        self._check_usable()
        ctx = multiprocessing.get_context("spawn")
        workers = [_Worker.spawn(ctx, n, job) for n, job in enumerate(self._jobs)]
        self._workers = workers
        self._finalizer = weakref.finalize(self, _stop_all, workers)
        try:
            for worker in workers:
                worker.wait_ready(self.spec)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Stop the workers (idempotent); the pool cannot be used afterwards."""
        if self._finalizer is not None:
            self._finalizer()
        self._workers = []
        self._broken = self._broken or "the pool was closed"

    def _check_usable(self) -> None:
        if self._broken is not None:
            raise PoolError(f"this AskPool cannot be used: {self._broken}; create a new one")

    def ask_many(self, questions: Sequence[str]) -> list[Answer]:
        """Answer ``questions``; the answers come back in the same order.

        Batches on one pool run one after another (a second caller waits).

        Raises:
            PoolError: Some questions failed (each is named, with its error; the
                other answers are attached), or a worker died (the pool is then
                closed and the unanswered questions are named).
        """
        if isinstance(questions, str):
            raise TypeError("ask_many takes a list of questions, not one string")
        with self._batch_lock:
            return self._run(list(questions))

    def _run(self, questions: list[str]) -> list[Answer]:
        self._check_usable()
        self.start()
        try:
            return _Batch(self._workers, questions).run()
        except _WorkerDied as died:
            self._broken = str(died)
            self.close()
            raise PoolError(str(died), died.answers) from None
        except PoolError:
            raise  # questions failed, but every result came back: the pool is fine
        except BaseException:
            # Interrupted mid-batch: results still in flight would be read by the
            # next batch, so the pool is not reusable.
            self._broken = "a batch was interrupted"
            self.close()
            raise

    async def ask_many_async(self, questions: Sequence[str]) -> list[Answer]:
        """:meth:`ask_many` without blocking the caller's event loop."""
        return await asyncio.to_thread(self.ask_many, questions)


def ask_many(
    store: Store | str | Path | None,
    questions: Sequence[str],
    model: str | ModelSpec | None = None,
    *,
    workers: int = 2,
    concurrency: int = 20,
    variant: SearchVariant = "hierarchical",
    role: RoleConfig | None = None,
    prices: PriceTable | None = None,
) -> list[Answer]:
    """Answer ``questions`` from ``store`` with a pool started for this call only.

    Takes the arguments of :class:`AskPool`; to pay the start-up once for many
    batches, keep an :class:`AskPool` open instead.

    Raises:
        PoolError: As for :meth:`AskPool.ask_many`, or a worker could not start.
    """
    with AskPool(store, model, workers=workers, concurrency=concurrency, variant=variant,
                 role=role, prices=prices) as pool:
        return pool.ask_many(questions)


class _WorkerDied(Exception):
    def __init__(self, message: str, answers: list[Answer | None]) -> None:
        super().__init__(message)
        self.answers = answers


@dataclass
class _Worker:
    """The parent's handle on one worker: the process and its two one-way pipes."""

    number: int
    process: Any
    requests: Connection
    results: Connection
    share: int
    in_flight: set[int] = field(default_factory=set)

    @classmethod
    def spawn(cls, ctx: Any, number: int, job: _Job) -> _Worker:
        req_read, req_write = ctx.Pipe(duplex=False)
        res_read, res_write = ctx.Pipe(duplex=False)
        process = ctx.Process(
            target=_worker_main, args=(job, req_read, res_write),
            name=f"memdir-ask-{number}", daemon=True,
        )
        process.start()
        req_read.close()
        res_write.close()
        return cls(number, process, req_write, res_read, job.share)

    def wait_ready(self, spec: ModelSpec) -> None:
        ready = wait([self.results, self.process.sentinel], timeout=_START_TIMEOUT)
        message: Any = None
        if self.results in ready:
            with contextlib.suppress(EOFError, OSError):
                message = self.results.recv()
        if isinstance(message, tuple) and message[0] == "ready":
            return
        if isinstance(message, tuple) and message[0] == "fatal":
            raise PoolError(f"worker {self.number} could not start with {spec.label()}: "
                            f"{message[1]}")
        why = "timed out" if not ready else f"exited with code {self.process.exitcode}"
        raise PoolError(f"worker {self.number} {why} while starting with {spec.label()}")

    def ask_to_stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.requests.send(("stop",))

    def stop(self) -> None:
        self.ask_to_stop()
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout=5)
        for conn in (self.requests, self.results):
            conn.close()


def _stop_all(workers: list[_Worker]) -> None:
    for worker in workers:
        worker.ask_to_stop()  # all at once: each then exits while the next is joined
    for worker in workers:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            worker.stop()


class _Batch:
    """One ``ask_many`` call: hands questions to free slots and gathers the results."""

    def __init__(self, workers: list[_Worker], questions: list[str]) -> None:
        self.workers = workers
        self.questions = questions
        self.pending = deque(range(len(questions)))
        self.answers: list[Answer | None] = [None] * len(questions)
        self.failures: dict[int, str] = {}
        self.done = 0

    def run(self) -> list[Answer]:
        for worker in self.workers:
            self._fill(worker)
        by_conn: dict[Any, _Worker] = {w.results: w for w in self.workers}
        by_sentinel: dict[Any, _Worker] = {w.process.sentinel: w for w in self.workers}
        while self.done < len(self.questions):
            for ready in wait([*by_conn, *by_sentinel]):
                if ready in by_sentinel:
                    worker = by_sentinel[ready]
                    self._drain(worker)
                    raise self._died(worker)
                worker = by_conn[ready]
                if not self._drain(worker):
                    raise self._died(worker)
                self._fill(worker)
        if self.failures:
            raise self._error()
        return [a for a in self.answers if a is not None]

    def _fill(self, worker: _Worker) -> None:
        while self.pending and len(worker.in_flight) < worker.share:
            index = self.pending.popleft()
            worker.in_flight.add(index)
            worker.requests.send(("ask", index, self.questions[index]))

    def _receive(self, worker: _Worker, message: tuple[Any, ...]) -> None:
        kind, index, payload = message
        worker.in_flight.discard(index)
        self.done += 1
        if kind == "answer":
            self.answers[index] = payload
        else:
            self.failures[index] = payload

    def _drain(self, worker: _Worker) -> bool:
        """Read every result the worker has sent; False if its pipe is gone."""
        try:
            while worker.results.poll():
                self._receive(worker, worker.results.recv())
        except (EOFError, OSError):
            return False
        return True

    def _died(self, worker: _Worker) -> _WorkerDied:
        worker.process.join(timeout=1)
        lost = sorted(worker.in_flight)
        named = "; ".join(f"#{i} {self.questions[i]!r}" for i in lost[:5])
        more = f" and {len(lost) - 5} more" if len(lost) > 5 else ""
        return _WorkerDied(
            f"worker {worker.number} (pid {worker.process.pid}) died with exit code "
            f"{worker.process.exitcode} while answering {len(lost)} question(s): {named}{more}; "
            f"{len(self.pending)} question(s) were not started. The pool is closed.",
            self.answers,
        )

    def _error(self) -> PoolError:
        first = min(self.failures)
        lines = [f"#{i} {self.questions[i]!r}: {self.failures[i].splitlines()[-1]}"
                 for i in sorted(self.failures)[:5]]
        more = len(self.failures) - len(lines)
        message = (
            f"{len(self.failures)} of {len(self.questions)} question(s) failed: "
            + "; ".join(lines) + (f"; and {more} more" if more else "")
            + f". Worker traceback of question #{first}:\n{self.failures[first]}"
        )
        return PoolError(message, self.answers, dict(self.failures))


# --- inside a worker process -------------------------------------------------------


def _worker_main(job: _Job, requests: Connection, results: Connection) -> None:
    """Entry point of a worker: build everything once, then answer until told to stop."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        state = loop.run_until_complete(_WorkerState.create(job))
    except Exception as exc:  # noqa: BLE001  (reported to the parent, which raises)
        results.send(("fatal", f"{type(exc).__name__}: {exc}"))
        return
    results.send(("ready",))
    loop.run_until_complete(state.serve(requests, results))
    loop.close()


@dataclass
class _WorkerState:
    job: _Job
    model: Any
    store: Store | None
    prices: PriceTable

    @classmethod
    async def create(cls, job: _Job) -> _WorkerState:
        from inspect_ai.model import get_model_info

        model = job.spec.build(job.share)
        store = None
        if job.store_root is not None and job.store_bytes is not None:
            store = Store(job.store_root, max_file_bytes=job.store_bytes)
        elif job.store_root is not None:
            store = Store(job.store_root)
        # inspect_ai reads its model database on the first usage record; do it now
        # so the first batch does not pay for it.
        get_model_info(str(model))
        return cls(job, model, store, job.prices or PriceTable.load())

    async def serve(self, requests: Connection, results: Connection) -> None:
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        _listen(loop, requests, inbox)
        tasks: set[asyncio.Task[None]] = set()
        while True:
            message = await inbox.get()
            if message[0] == "stop":
                break
            _, index, question = message
            task = loop.create_task(self._answer(index, question, results))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _answer(self, index: int, question: str, results: Connection) -> None:
        try:
            answer = await ask(self.store, question, self.model, variant=self.job.variant,
                               role=self.job.role, prices=self.prices)
        except BaseException as exc:  # sent to the parent, which raises PoolError
            results.send(("error", index, traceback.format_exc().rstrip()))
            if not isinstance(exc, Exception):
                raise
            return
        results.send(("answer", index, answer))


def _listen(
    loop: asyncio.AbstractEventLoop, requests: Connection, inbox: asyncio.Queue[tuple[Any, ...]]
) -> None:
    """Feed the parent's messages into ``inbox``; a closed pipe reads as "stop".

    The event loop watches the pipe itself where it can (no thread, so a question
    is picked up as soon as the loop is free rather than when a reader thread
    next gets the GIL); elsewhere a reader thread does it.
    """

    def receive() -> tuple[Any, ...]:
        try:
            message: tuple[Any, ...] = requests.recv()
        except (EOFError, OSError):
            message = ("stop",)
        return message

    def on_readable() -> None:
        while requests.poll():
            message = receive()
            inbox.put_nowait(message)
            if message[0] == "stop":
                loop.remove_reader(requests.fileno())
                return

    try:
        loop.add_reader(requests.fileno(), on_readable)
        return
    except NotImplementedError:  # e.g. the proactor loop on Windows
        pass

    def read() -> None:
        while True:
            message = receive()
            loop.call_soon_threadsafe(inbox.put_nowait, message)
            if message[0] == "stop":
                return

    threading.Thread(target=read, name="memdir-ask-inbox", daemon=True).start()
