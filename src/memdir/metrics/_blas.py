"""BLAS at one thread while a measurement runs, except where a value's bits depend on it.

OpenBLAS, which numpy calls for dense products, starts one thread per core. Between
calls its idle threads spin for a while before they sleep, and that spinning is CPU
time spent for nothing: B3 makes one dense product per block of groups, so the
second thread spins through most of B3 (a few seconds at 100,000 files). With one
thread there is no second thread to spin.

The thread count changes no dense matrix product's floats here (each output is
summed along the same inner dimension by the same kernel, whichever thread owns
it), but it does change a long dot product's: OpenBLAS splits the sum across its
threads and adds the partial sums. B2's ``total @ total`` is such a dot product, so
it runs with the threads BLAS had when the measurement began
(:func:`started_blas_threads`), and its digits stay what they were.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["one_blas_thread", "started_blas_threads"]

_STARTED: ContextVar[tuple[tuple[Any, int], ...] | None] = ContextVar("_STARTED", default=None)
"""Inside :func:`one_blas_thread`: each BLAS library's controller and its thread count
when the block began."""


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with every loaded BLAS library at one thread, then restore each.

    Only libraries already loaded are limited (numpy's is, once ``numpy`` is
    imported); a library loaded inside the block keeps its own count.
    """
    from threadpoolctl import (  # a dependency (scikit-learn requires it too)
        ThreadpoolController,  # a few tens of ms to import: only where a measurement runs
    )

    libraries = ThreadpoolController().select(user_api="blas").lib_controllers
    started = tuple((lib, int(lib.num_threads)) for lib in libraries)
    token = _STARTED.set(started)
    try:
        for lib, _ in started:
            lib.set_num_threads(1)
        yield
    finally:
        for lib, threads in started:
            lib.set_num_threads(threads)
        _STARTED.reset(token)


@contextmanager
def started_blas_threads() -> Iterator[None]:
    """Inside :func:`one_blas_thread`, run the block with the threads BLAS had before it.

    Outside one, nothing changes. For the few calls whose floats depend on the
    number of threads.
    """
    started = _STARTED.get()
    if not started:
        yield
        return
    try:
        for lib, threads in started:
            lib.set_num_threads(threads)
        yield
    finally:
        for lib, _ in started:
            lib.set_num_threads(1)
