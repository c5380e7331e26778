"""Every pair of rows at or above a cosine threshold, found without comparing all pairs.

The rows are unit-length TF-IDF vectors (non-negative weights). The search is
prefix filtering (the All-Pairs method of Bayardo, Ma and Srikant, 2007): order
the terms rarest first; a row's *prefix* is its entries up to the point where
what remains of the row has norm below the threshold. Two rows whose cosine
reaches the threshold share a term that lies in both prefixes (their first common
term: had it been past one row's prefix, every common term would be, and the
cosine would be at most that row's remaining norm, under the threshold). So the
candidates are the pairs that meet in the prefix postings of some term, and
each candidate's cosine is then computed exactly. Nothing is approximated: the
result is every pair the all-pairs product would find.

Prefixes hold a row's rarest terms, whose postings are short, so the work
follows the number of rows and of near pairs rather than the square of the rows.
Rows can be confined to groups (only pairs within one group are wanted, e.g.
siblings under one parent); the postings are then per group and term.

On text whose "rare" words still recur in thousands of rows (a large store
written from a small vocabulary), the prefix postings grow with the store and
so do their pairs, quadratically. The ``sketch`` mode bounds that: long postings
are not paired in full; instead rows meet when they share two of their few
rarest terms (a bottom-k sketch, as in MinHash with one global order). Copies
and lightly edited copies always do; the benchmarks report its recall against
the exact search.

Most candidates share a rare word and little else. Before a candidate's cosine
is computed it must pass a cheap upper bound: the terms are dealt into
:data:`BLOCKS` blocks by term number, and by the Cauchy-Schwarz inequality within
each block a pair's dot product is at most the sum over blocks of the products
of the two rows' norms in that block. Each row keeps those norms as one byte
per block, rounded up against its largest block, so the bound stays an upper
bound and costs 64 byte products per pair. A pair is dropped only when its
bound is below the threshold, so the pairs found and their cosines are those
the unfiltered search gives, bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from scipy import sparse

from memdir.metrics._text import column_counts, cosine_rows

__all__ = ["BLOCKS", "SKETCH_RUN", "block_bounds", "pair_bounds", "prefix_entries",
           "similar_pairs", "unique_first"]

_MARGIN = 1e-9
"""Prefixes are cut for a threshold this much lower, so rounding never loses a pair."""
_SORT_KEYS = 1 << 19
"""Most candidate keys sorted at once (each passes through some 50 bytes of arrays; the
sketch of 100,000 files holds 2.8 million keys)."""
_BATCH = 1 << 18
"""Candidate pairs generated (and their cosines computed) per batch: bounds memory (each
pair passes through some 90 bytes of arrays, 24 MB a batch)."""
_COSINE_BATCH = 25_000
"""Candidate pairs whose cosines are computed at once (their rows are copied out)."""
SKETCH_RUN = 64
"""With a sketch, prefix postings of up to this many rows are still paired in full."""
BLOCKS = 64
"""Blocks of terms in the candidates' upper bound: a row's byte per block fills one cache line.

On the 10,000-file scale store 32 blocks let 15 % of the candidates through, 64
blocks 0.04 % (950 of 2.66 million, 378 of them real)."""
_LEVELS = 255
"""A block's norm is kept as a whole number of 1/255ths of its row's largest block norm."""
_BOUND_BATCH = 32_768
"""Candidate pairs bounded at once (two 2 MB gathers of the byte table)."""


def unique_first(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_index=True)`` by a stable sort.

    The same sorted values and first positions; numpy 2.4's hash-based ``unique``
    takes some twenty times longer on millions of 64-bit integers.
    """
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    head = np.ones(len(ordered), bool)
    head[1:] = ordered[1:] != ordered[:-1]
    return ordered[head], order[head]


def _run_sizes(values: np.ndarray) -> np.ndarray:
    """For each item, how many items hold its value (``counts[inverse]`` of ``np.unique``).

    Non-negative values no larger than a few times the number of items (term
    numbers) are counted with one ``bincount``; others are sorted.
    """
    if len(values) == 0:
        return np.zeros(0, np.int64)
    if values.min() >= 0 and values.max() < 4 * len(values) + (1 << 20):
        sizes: np.ndarray = np.bincount(values)[values].astype(np.int64, copy=False)
        return sizes
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    head = np.ones(len(ordered), bool)
    head[1:] = ordered[1:] != ordered[:-1]
    group = np.cumsum(head) - 1
    sizes = np.empty(len(values), np.int64)
    sizes[order] = np.bincount(group)[group]
    return sizes


def _short_runs(values: np.ndarray, longest: int) -> np.ndarray:
    """Whether each item's value is held by at most ``longest`` items (``_run_sizes <= longest``).

    Values that :func:`_run_sizes` counts with a ``bincount`` are tested per value,
    so no count per item is made.
    """
    if len(values) and values.min() >= 0 and values.max() < 4 * len(values) + (1 << 20):
        short: np.ndarray = (np.bincount(values) <= longest)[values]
        return short
    return _run_sizes(values) <= longest


_CHUNK_ENTRIES = 1 << 18
"""Matrix entries sorted and measured at once by the prefix and sketch passes: bounds
their memory (a hundred thousand files hold some thirty million entries, and each entry
of a chunk passes through some 80 bytes of arrays, 20 MB a chunk)."""


def _row_chunks(indptr: np.ndarray, entries: int) -> Iterator[tuple[int, int]]:
    """Consecutive row ranges ``[first, end)`` holding about ``entries`` entries each."""
    n = len(indptr) - 1
    first = 0
    while first < n:
        end = int(np.searchsorted(indptr, indptr[first] + entries, side="right")) - 1
        end = min(max(end, first + 1), n)
        yield first, end
        first = end


def _term_ranks(matrix: sparse.csr_matrix) -> np.ndarray:
    """Each term's place in the order rarest first (fewest rows holding it; ties by number)."""
    width = matrix.shape[1]
    df = column_counts(matrix.indices, width)
    rank = np.empty(width, np.int64)
    rank[np.lexsort((np.arange(width), df))] = np.arange(width)
    return rank


def _rarest_first(matrix: sparse.csr_matrix, rank: np.ndarray, first: int, end: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The entries of rows ``first`` to ``end - 1``, each row's rarest term first.

    Returns rows, terms, weights, and each row's offset into these arrays.
    """
    lo, hi = matrix.indptr[first], matrix.indptr[end]
    indptr = matrix.indptr[first : end + 1] - lo
    indices = matrix.indices[lo:hi]
    local = np.repeat(np.arange(end - first, dtype=np.int64), np.diff(indptr))
    # One int64 key per entry (row, then rank) sorts as lexsort((rank, rows)) would: no
    # term repeats within a row and ranks are distinct, so every key is distinct and any
    # sort gives that one order, in a fraction of lexsort's time.
    key = local * max(len(rank), 1)
    key += rank[indices]
    order = np.argsort(key)
    del key
    return (local[order] + first, indices[order].astype(np.int64), matrix.data[lo:hi][order],
            indptr)


def prefix_entries(matrix: sparse.csr_matrix, threshold: float, *,
                   chunk: int = _CHUNK_ENTRIES) -> tuple[np.ndarray, np.ndarray]:
    """The (row, term) entries of every row's prefix for ``threshold``.

    A row's entries are taken rarest term first (fewest rows holding it; ties by
    term number) while the norm of the entries from that one to the row's end is
    at least ``threshold`` (less a small margin). Rows are taken ``chunk`` entries
    at a time, the running sum of squares carried over, so the result is the same
    bit for bit as one pass over every entry would give.
    """
    rows, cols, _, _ = _prefix_and_sketch(matrix, threshold, None, chunk=chunk)
    return rows, cols


def _prefix_and_sketch(matrix: sparse.csr_matrix, threshold: float, terms: int | None, *,
                       chunk: int = _CHUNK_ENTRIES
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`prefix_entries` and, with ``terms``, :func:`_sketch_keys` in one pass.

    Both read every row rarest term first; sorting each chunk of rows once for the
    two of them halves that work, and the arrays are those the two passes give.
    """
    matrix = sparse.csr_matrix(matrix)
    empty = np.zeros(0, np.int64)
    if matrix.nnz == 0:
        return empty, empty, empty, empty
    width = matrix.shape[1]
    rank = _term_ranks(matrix)
    cut = max(threshold - _MARGIN, 0.0)
    kept_rows: list[np.ndarray] = []
    kept_cols: list[np.ndarray] = []
    keys: list[np.ndarray] = []
    owners: list[np.ndarray] = []
    carry = np.zeros(1)  # the sum of squares of every earlier entry, in entry order
    for first, end in _row_chunks(matrix.indptr, chunk):
        rows, cols, weights, indptr = _rarest_first(matrix, rank, first, end)
        if terms is not None:
            key, owner = _sketch_chunk(rows, cols, indptr, terms, width)
            keys.append(key)
            owners.append(owner)
        if len(rows) == 0:
            continue
        squares = weights**2
        running = np.cumsum(np.concatenate([carry, squares]))[1:]
        carry = running[-1:]
        before = running - squares  # squared mass of all earlier entries
        starts = indptr[:-1]
        row_base = np.zeros(end - first)
        nonempty = np.diff(indptr) > 0
        row_base[nonempty] = before[starts[nonempty]]
        local = rows - first
        totals = np.bincount(local, weights=squares, minlength=end - first)
        remaining = totals[local] - (before - row_base[local])  # this entry and all after it
        keep = remaining >= cut * cut - 1e-15 if cut > 0 else np.ones(len(rows), bool)
        kept_rows.append(rows[keep])
        kept_cols.append(cols[keep])
    # Each list is joined and let go before the next: joining all four at once would hold
    # every entry twice.
    return _joined(kept_rows), _joined(kept_cols), _joined(keys), _joined(owners)


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """The arrays of ``parts`` one after the other (int64 zeros when none); empties ``parts``."""
    if not parts:
        return np.zeros(0, np.int64)
    out = np.concatenate(parts)
    parts.clear()
    return out


def _candidates(keys: np.ndarray, rows: np.ndarray, *, part: int = _SORT_KEYS
                ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Batches of row pairs ``(a, b)``, ``a < b``, that share a key (duplicates possible).

    More than ``part`` entries are taken in parts by key (``key % parts``), so no
    sort holds more than about ``part`` of them; two entries of one key are in one
    part, so the pairs are the same (in another order).
    """
    parts = -(-len(keys) // max(part, 1))
    if parts <= 1:
        yield from _sorted_candidates(keys, rows)
        return
    owner = np.empty(len(keys), np.uint8 if parts < 256 else np.int64)
    for start in range(0, len(keys), part):  # each key's part, a run of keys at a time
        owner[start : start + part] = np.remainder(keys[start : start + part], parts)
    for which in range(parts):
        chosen = owner == which
        yield from _sorted_candidates(keys[chosen], rows[chosen])


def _sorted_candidates(keys: np.ndarray, rows: np.ndarray
                       ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """:func:`_candidates` of entries sorted at once.

    The entries are ordered by key, then row. When the rows come in order (the prefix
    and sketch passes give them so), that order comes from a stable ``argsort`` of
    the keys; else when ``key * rows + row`` fits in 64 bits from one ``argsort`` of
    it (equal codes are equal entries, so how a sort breaks ties cannot show), else
    from ``lexsort``.
    """
    if len(keys) < 2:
        return
    span = int(rows.max()) + 1
    if not np.any(rows[1:] < rows[:-1]):  # rows in order (as the passes give them): by key alone
        order = np.argsort(keys, kind="stable")
    elif keys.min() >= 0 and rows.min() >= 0 and int(keys.max()) < (2**62) // span:
        codes = keys * span
        codes += rows
        order = np.argsort(codes)
        del codes
    else:
        order = np.lexsort((rows, keys))
    keys = keys[order]
    # An entry whose key no other entry holds pairs with none: only the others are kept
    # (most sketch keys are held once), in the same order.
    same = keys[1:] == keys[:-1]
    shared = np.zeros(len(keys), bool)
    shared[1:] = same
    shared[:-1] |= same
    del same
    keys, rows = keys[shared], rows[order[shared]]
    del order, shared
    if len(keys) < 2:
        return
    boundary = np.flatnonzero(np.diff(keys)) + 1
    run_start = np.concatenate([[0], boundary])
    run_len = np.diff(np.concatenate([run_start, [len(keys)]]))
    position = np.arange(len(keys)) - np.repeat(run_start, run_len)
    partners = np.repeat(run_len, run_len) - 1 - position  # entries after this one in its run
    live = np.flatnonzero(partners > 0)
    if len(live) == 0:
        return
    counts = partners[live]
    ends = np.cumsum(counts)
    first = 0
    while first < len(live):
        base = ends[first - 1] if first else 0
        last = int(np.searchsorted(ends, base + _BATCH, side="right"))
        last = max(last, first + 1)
        entries, many = live[first:last], counts[first:last]
        left = np.repeat(entries, many)
        offset = np.arange(len(left)) - np.repeat(np.cumsum(many) - many, many)
        right = left + 1 + offset
        a, b = rows[left], rows[right]
        yield np.minimum(a, b), np.maximum(a, b)
        first = last


def _sketch_keys(matrix: sparse.csr_matrix, terms: int, *, chunk: int = _CHUNK_ENTRIES
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(key, row) for every pair of terms among each row's ``terms`` rarest terms.

    Rows are taken ``chunk`` entries at a time (the result does not depend on it).
    """
    width = matrix.shape[1]
    rank = _term_ranks(matrix)
    keys: list[np.ndarray] = []
    owners: list[np.ndarray] = []
    for first, end in _row_chunks(matrix.indptr, chunk):
        rows, cols, _, indptr = _rarest_first(matrix, rank, first, end)
        key, owner = _sketch_chunk(rows, cols, indptr, terms, width)
        keys.append(key)
        owners.append(owner)
    if not keys:
        empty = np.zeros(0, np.int64)
        return empty, empty
    return np.concatenate(keys), np.concatenate(owners)


def _sketch_chunk(rows: np.ndarray, cols: np.ndarray, indptr: np.ndarray, terms: int,
                  width: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_sketch_keys` of one chunk of rows, given rarest term first."""
    position = np.arange(len(rows)) - np.repeat(indptr[:-1], np.diff(indptr))
    keep = position < terms
    cols, rows, position = cols[keep], rows[keep], position[keep]
    kept = np.minimum(np.diff(indptr), terms)
    later = np.repeat(kept, kept) - 1 - position  # kept terms after this one in its row
    left = np.repeat(np.arange(len(rows)), later)
    offset = np.arange(len(left)) - np.repeat(np.cumsum(later) - later, later)
    right = left + 1 + offset
    x, y = np.minimum(cols[left], cols[right]), np.maximum(cols[left], cols[right])
    return x * width + y, rows[left]


_BOUND_CHUNK = 250_000
"""Matrix entries turned into block norms at once: the float blocks of a chunk's rows
take some eight times the bytes of their entries, so a smaller chunk than the sort's."""


def block_bounds(matrix: sparse.csr_matrix, *, chunk: int = _BOUND_CHUNK
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Each row's norm within each block of terms, in bytes, and each row's byte scale.

    Term ``j`` lies in block ``j % BLOCKS``. Row ``r``'s norm in block ``k`` is at
    most ``levels[r, k] * scale[r] / 255``: ``scale`` is the row's largest block
    norm and every non-empty block is rounded up to the next whole 1/255th of it
    (an empty block is 0). Rows are taken ``chunk`` entries at a time, so the
    memory beside the result is bounded; the result is ``rows x BLOCKS`` bytes.
    """
    matrix = sparse.csr_matrix(matrix)
    n = matrix.shape[0]
    levels = np.zeros((n, BLOCKS), np.uint8)
    scale = np.zeros(n)
    for first, end in _row_chunks(matrix.indptr, chunk):
        lo, hi = matrix.indptr[first], matrix.indptr[end]
        local = np.repeat(np.arange(end - first, dtype=np.int64),
                          np.diff(matrix.indptr[first : end + 1]))
        slot = local * BLOCKS + matrix.indices[lo:hi] % BLOCKS
        squares = np.bincount(slot, weights=matrix.data[lo:hi] ** 2,
                              minlength=(end - first) * BLOCKS)
        norms = np.sqrt(squares).reshape(end - first, BLOCKS)
        top = norms.max(axis=1)
        # x <= top, so x / top <= 1 in floating point too; floor + 1 lies above the exact
        # quotient, and a block clipped to 255 is the row's largest, whose bound is top.
        ratio = norms / np.where(top > 0, top, 1.0)[:, None]
        level = np.minimum(np.floor(ratio * _LEVELS) + 1, _LEVELS)
        levels[first:end] = np.where(norms > 0, level, 0)
        scale[first:end] = top
    return levels, scale


def pair_bounds(levels: np.ndarray, scale: np.ndarray, a: np.ndarray, b: np.ndarray
                ) -> np.ndarray:
    """An upper bound on the dot product of each row pair ``(a[k], b[k])``.

    The sum over blocks of the two rows' block norms (from :func:`block_bounds`),
    at least the dot product by the Cauchy-Schwarz inequality in each block. The
    byte products and their sum are whole numbers, exact in 16 and 32 bits.
    """
    out = np.empty(len(a))
    for start in range(0, len(a), _BOUND_BATCH):
        x, y = a[start : start + _BOUND_BATCH], b[start : start + _BOUND_BATCH]
        dots = np.multiply(levels[x], levels[y], dtype=np.uint16).sum(axis=1, dtype=np.uint32)
        out[start : start + len(x)] = dots * (scale[x] * scale[y]) / (_LEVELS * _LEVELS)
    return out


def similar_pairs(
    matrix: sparse.csr_matrix,
    threshold: float,
    *,
    groups: np.ndarray | None = None,
    apart: np.ndarray | None = None,
    sketch: int | None = None,
    sketch_run: int = SKETCH_RUN,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every row pair ``(a, b)``, ``a < b``, with cosine at least ``threshold``.

    Args:
        matrix: Unit-length rows with non-negative weights.
        threshold: The least cosine kept (above 0).
        groups: When given, only pairs of rows in the same group.
        apart: When given, only pairs whose labels here differ (e.g. the file of each unit).
        sketch: None searches exactly. A number ``k`` bounds the work instead: a term's
            prefix postings are paired in full only while they hold at most
            ``sketch_run`` rows, and beyond that two rows are compared only when they
            share two of their ``k`` rarest terms (as copies and lightly edited copies
            do). This finds near-copies in linear work on stores whose "rare" words
            recur in thousands of units, at the price of exactness, so
            the recall against the exact search is measured by the benchmarks.
        sketch_run: With a sketch, the longest prefix postings still paired in full.

    Returns:
        Arrays ``a``, ``b`` and their cosines, ordered by ``a`` then ``b``. A candidate
        whose block bound (:func:`pair_bounds`) is below the threshold is dropped
        before its cosine is computed; every other one gets
        :func:`memdir.metrics._text.cosine_rows`, so the result does not depend on
        the bound. The cost grows with the matrix's entries and the candidates.
    """
    rows, cols, sketch_keys, sketch_rows = _prefix_and_sketch(matrix, threshold, sketch)
    floor = threshold - _MARGIN  # rounding in the bound is far below this margin
    width = matrix.shape[1]
    keys = cols if groups is None else groups[rows].astype(np.int64) * width + cols
    del cols
    n = matrix.shape[0]
    sources = []
    if sketch is None:
        sources.append(_candidates(keys, rows))
    else:
        short = _short_runs(keys, sketch_run)
        keys = keys[short]  # few are short: the long postings' entries are let go here
        rows = rows[short]
        del short
        sources.append(_candidates(keys, rows))
        if groups is not None:
            sketch_keys = sketch_keys * (int(groups.max()) + 1) + groups[sketch_rows]
        sources.append(_candidates(sketch_keys, sketch_rows))
    # The sources hold what they pair; letting go here lets each free its arrays as it
    # sorts them (the sketch's alone are some 45 MB at 100,000 files).
    del rows, keys, sketch_keys, sketch_rows
    levels, scale = block_bounds(matrix)  # once the long postings' entries are gone
    found_a: list[np.ndarray] = []
    found_b: list[np.ndarray] = []
    found_c: list[np.ndarray] = []
    for a, b in (pair for source in sources for pair in source):
        reach = pair_bounds(levels, scale, a, b) >= floor
        a, b = a[reach], b[reach]
        codes = np.sort(a * n + b)
        codes = codes[np.concatenate([[True], codes[1:] != codes[:-1]])] if len(codes) else codes
        a, b = codes // n, codes % n
        if apart is not None:
            differ = apart[a] != apart[b]
            a, b = a[differ], b[differ]
        for start in range(0, len(a), _COSINE_BATCH):
            left, right = a[start : start + _COSINE_BATCH], b[start : start + _COSINE_BATCH]
            cos = cosine_rows(matrix, left, right)
            near = cos >= threshold - 1e-12
            found_a.append(left[near])
            found_b.append(right[near])
            found_c.append(cos[near])
    if not found_a:
        empty = np.zeros(0, np.int64)
        return empty, empty, np.zeros(0)
    a, b, c = np.concatenate(found_a), np.concatenate(found_b), np.concatenate(found_c)
    codes, first = unique_first(a * n + b)
    return codes // n, codes % n, c[first]
