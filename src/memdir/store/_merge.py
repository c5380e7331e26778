"""The three-way merge of one memory file, and the git merge driver that runs it.

git calls the driver (``python -m memdir.store._merge %O %A %B %P``, named
``memdir`` in ``.git/info/attributes`` and defined in ``.git/config``) for each
file both sides changed; it writes the merged file over ``%A`` and always
succeeds, so git never leaves its conflict markers in a store. The merge:

* the frontmatter merges field by field (nested maps such as ``metadata`` key
  by key): a field only one side changed takes that change, a field one side
  removed and the other changed keeps the change, and a field both changed
  differently keeps this side's value in the header and both values in a
  conflict block at the top of the body;
* the body merges line by line, in this process, as ``git merge-file --diff3``
  does (a shortest diff of each side against the common ancestor; regions both
  sides changed differently are marked; texts too far apart for the bounded diff
  here go to ``git merge-file`` itself); where both sides only added lines at
  one place, both additions are kept (this side's first); where both changed
  the same lines, both versions go into a conflict block
  (:mod:`memdir.store._conflicts`);
* anything that cannot be merged that way (no usable header on a side, text
  that is not UTF-8, a failing ``git merge-file``) keeps this side's file whole
  with the other side's text in one conflict block, so nothing is ever lost and
  the header this side had stays valid.

Labels naming each side come from ``MEMDIR_MERGE_OURS`` and
``MEMDIR_MERGE_THEIRS`` (set by ``memdir sync``); a person's plain ``git merge``
gets neutral ones. The work is bounded: files are capped in size by the store,
the header parse is the store's bounded YAML loader, the diff here stops after
a bounded number of steps, and ``git merge-file`` runs with a time limit.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from memdir.store._conflicts import LINES_WHAT, block_id, find_blocks, render_block

__all__ = ["Labels", "Merged", "main", "merge_bytes"]

_MERGE_FILE_SECONDS: Final = 30.0
_DIFF_STEPS: Final = 1_000_000
"""Most steps a line diff takes in this process; past them ``git merge-file`` merges."""
_MIN_MARKER: Final = 40
_ENCODING: Final = "utf-8"
_ERRORS: Final = "surrogateescape"
_MISSING: Final = object()
_OURS: Final = "this replica"
_THEIRS: Final = "the other replica"
_SLUG: Final = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True, slots=True)
class Labels:
    """How conflict blocks name the two sides."""

    ours: str = _OURS
    theirs: str = _THEIRS

    @classmethod
    def from_environment(cls) -> Labels:
        """The labels ``memdir sync`` passes to the driver, or the neutral ones."""
        return cls(os.environ.get("MEMDIR_MERGE_OURS") or _OURS,
                   os.environ.get("MEMDIR_MERGE_THEIRS") or _THEIRS)


@dataclass(frozen=True, slots=True)
class Merged:
    """A merge's result: the file's bytes, conflict blocks written, additions kept from both."""

    data: bytes
    conflicts: int = 0
    unions: int = 0


def merge_bytes(base: bytes | None, ours: bytes, theirs: bytes, path: str,
                labels: Labels | None = None) -> Merged:
    """Merge two versions of one file against their common ancestor.

    Args:
        base: The common ancestor's bytes; None when both sides added the file.
        ours: This side's bytes (its header is the one kept on a field conflict).
        theirs: The other side's bytes.
        path: The file's path (its stem is the ``name`` the header should carry).
        labels: How conflict blocks name the sides.
    """
    labels = labels or Labels()
    if ours == theirs or theirs == base:
        return Merged(ours)
    if ours == base:
        return Merged(theirs)
    try:
        texts = [b.decode(_ENCODING) for b in (base or b"", ours, theirs)]
    except UnicodeDecodeError:
        return _whole(base, ours, theirs, path, labels)
    try:
        return _merge_text(texts[0] if base is not None else None, texts[1], texts[2], path,
                           labels)
    except _CannotMerge:
        return _whole(base, ours, theirs, path, labels)


class _CannotMerge(Exception):
    """The structured merge does not apply; keep both files whole."""


def _whole(base: bytes | None, ours: bytes, theirs: bytes, path: str, labels: Labels) -> Merged:
    """This side's file as it is, with the other side's whole text in one conflict block."""
    ours_text = ours.decode(_ENCODING, _ERRORS)
    theirs_text = theirs.decode(_ENCODING, _ERRORS)
    head, body = _split(ours_text)
    _, their_body = _split(theirs_text)
    other = theirs_text if head is None else their_body
    what = ("two replicas changed this file at the same time in ways that cannot be merged "
            "line by line; this version is the file as it was here, the other is the other "
            "replica's. Keep what is true and replace everything from this line to the end "
            "line with it")
    block = render_block(block_id(path, ours_text, theirs_text), what,
                         [(f"{labels.ours} (the file as it was here)", body),
                          (labels.theirs, other)])
    text = (head or "") + block
    return Merged(text.encode(_ENCODING, _ERRORS), conflicts=1)


def _split(text: str) -> tuple[str | None, str]:
    """(the header with both ``---`` lines, the body), or (None, text) without a header."""
    lines = text.split("\n")
    if len(lines) < 2 or lines[0].lstrip("\ufeff").rstrip("\r") != "---":
        return None, text
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r") == "---":
            return "\n".join(lines[: index + 1]) + "\n", "\n".join(lines[index + 1 :])
    return None, text


def _merge_text(base: str | None, ours: str, theirs: str, path: str, labels: Labels) -> Merged:
    heads = [_split(t) for t in (base or "", ours, theirs)]
    (base_head, base_body), (our_head, our_body), (their_head, their_body) = heads
    if base is None:
        base_head, base_body = None, ""
    if our_head is None or their_head is None:
        if our_head is not None or their_head is not None:
            raise _CannotMerge  # one side has a header and the other none
        body, conflicts, unions = _merge_lines(base or "", ours, theirs, path, labels)
        return Merged(body.encode(_ENCODING, _ERRORS), conflicts, unions)
    head, field_blocks = _merge_header(base_head, our_head, their_head, path, labels)
    body, conflicts, unions = _merge_lines(base_body, our_body, their_body, path, labels)
    text = head + "".join(field_blocks) + body
    return Merged(text.encode(_ENCODING, _ERRORS), conflicts + len(field_blocks), unions)


# -- the header, field by field ---------------------------------------------------------


def _load(head: str | None) -> dict[str, Any]:
    if head is None:
        return {}
    import yaml

    from memdir.store._frontmatter import load_header

    inner = head.split("\n", 1)[1].rsplit("---", 1)[0]
    try:
        data = load_header(inner) if inner.strip() else {}
    except yaml.YAMLError:
        raise _CannotMerge from None
    if not isinstance(data, dict):
        raise _CannotMerge
    return {str(k): v for k, v in data.items()}


def _merge_header(base: str | None, ours: str, theirs: str, path: str,
                  labels: Labels) -> tuple[str, list[str]]:
    """The merged header text, and one conflict block per field both sides set differently."""
    if ours == theirs or theirs == base:
        return ours, []
    if ours == base:
        return theirs, []
    conflicts: list[tuple[str, Any, Any]] = []
    merged = _merge_map(_load(base), _load(ours), _load(theirs), "", conflicts)
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    blocks: list[str] = []
    for field, our_value, their_value in conflicts:
        if field == "name" and _SLUG.match(stem) and stem in (our_value, their_value):
            merged["name"] = stem  # a rename on one side: the name follows the file
            continue
        blocks.append(_field_block(path, field, our_value, their_value, labels))
    import yaml

    dumped = yaml.safe_dump(merged, sort_keys=False, allow_unicode=True, width=10_000)
    return f"---\n{dumped}---\n", blocks


def _merge_map(base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any],
               prefix: str, conflicts: list[tuple[str, Any, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    keys = list(ours) + [k for k in theirs if k not in ours]
    for key in keys:
        b, o, t = (m.get(key, _MISSING) for m in (base, ours, theirs))
        if o == t:
            value = o
        elif b == o:
            value = t  # only the other side changed it (or removed it)
        elif b == t:
            value = o
        elif o is _MISSING:
            value = t  # removed here, changed there: the change is kept
        elif t is _MISSING:
            value = o
        elif isinstance(o, dict) and isinstance(t, dict):
            value = _merge_map(b if isinstance(b, dict) else {}, o, t, f"{prefix}{key}.",
                               conflicts)
        else:
            conflicts.append((f"{prefix}{key}", o, t))
            value = o
        if value is not _MISSING:
            merged[key] = value
    return merged


def _field_block(path: str, field: str, ours: Any, theirs: Any, labels: Labels) -> str:
    import yaml

    def shown(value: Any) -> str:
        return yaml.safe_dump({field: value}, sort_keys=False, allow_unicode=True,
                              width=10_000).rstrip("\n")

    what = (f"the header field {field} was set differently on two replicas at the same time; "
            "the header keeps the first version. Put the value to keep in the header, then "
            "remove everything from this line to the end line")
    return render_block(block_id(path, field, shown(ours), shown(theirs)), what,
                        [(f"{labels.ours} (in the header now)", shown(ours)),
                         (labels.theirs, shown(theirs))])


# -- the body, line by line ---------------------------------------------------------------


def _marker_size(*texts: str) -> int:
    """A conflict marker length no line of the inputs starts with."""
    longest = 0
    for text in texts:
        for match in re.finditer(r"^(<+|>+|=+|\|+)", text, re.MULTILINE):
            longest = max(longest, len(match.group(1)))
    return max(_MIN_MARKER, longest + 1)


def _merge_file(base: str, ours: str, theirs: str, size: int) -> str:
    """``git merge-file --diff3`` of three texts; its output with conflict regions."""
    with tempfile.TemporaryDirectory(prefix="memdir-merge-") as scratch:
        names = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            file = Path(scratch) / name
            file.write_bytes(text.encode(_ENCODING, _ERRORS))
            names.append(str(file))
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull})
        try:
            done = subprocess.run(
                ["git", "merge-file", "-p", "--diff3", f"--marker-size={size}",
                 "-L", "ours", "-L", "base", "-L", "theirs", *names],
                capture_output=True, env=env, timeout=_MERGE_FILE_SECONDS, check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            raise _CannotMerge from None
    if done.returncode < 0 or done.returncode > 127:
        raise _CannotMerge  # binary input, or git failed
    return done.stdout.decode(_ENCODING, _ERRORS)


def _merge_lines(base: str, ours: str, theirs: str, path: str,
                 labels: Labels) -> tuple[str, int, int]:
    """The merged text, how many conflict blocks it holds, how many additions were joined."""
    if ours == theirs or theirs == base:
        return ours, 0, 0
    if ours == base:
        return theirs, 0, 0
    held: dict[str, str] = {}
    base, ours, theirs = (_hold(text, held) for text in (base, ours, theirs))
    chunks = _chunks(base.split("\n"), ours.split("\n"), theirs.split("\n"))
    if chunks is None:  # too far apart to diff here within the bound: git's C does it
        chunks = _git_chunks(base, ours, theirs)
    out: list[str] = []
    conflicts = unions = 0
    for chunk in chunks:
        if isinstance(chunk, list):
            out.extend(chunk)
            continue
        kept, blocks, joined = _resolve(chunk, path, labels, held)
        out.extend(kept)
        conflicts += blocks
        unions += joined
    return _unhold("\n".join(out), held), conflicts, unions


def _git_chunks(base: str, ours: str, theirs: str) -> list[list[str] | dict[str, list[str]]]:
    """As :func:`_chunks`, from ``git merge-file --diff3``'s output (for texts past its bound)."""
    size = _marker_size(base, ours, theirs)
    raw = _merge_file(base, ours, theirs, size)
    starts = {"<" * size + " ours": "ours", "|" * size + " base": "base",
              "=" * size: "theirs", ">" * size + " theirs": "end"}
    out: list[list[str] | dict[str, list[str]]] = [[]]
    region: dict[str, list[str]] | None = None
    part = ""
    for line in raw.split("\n"):
        mark = starts.get(line)
        if mark == "ours" and region is None:
            region, part = {"ours": [], "base": [], "theirs": []}, "ours"
        elif region is not None and mark in ("base", "theirs"):
            part = mark
        elif region is not None and mark == "end":
            out += [region, []]
            region = None
        elif region is not None:
            region[part].append(line)
        else:
            last = out[-1]
            assert isinstance(last, list)
            last.append(line)
    if region is not None:
        raise _CannotMerge  # an unterminated region: do not guess
    return out


def _matches(a: list[str], b: list[str]) -> list[tuple[int, int]] | None:
    """The lines ``a`` and ``b`` share, as ``(index in a, index in b)`` pairs in order.

    The matched lines of a shortest edit script (Myers' algorithm), after the
    common start and end are set aside. None when finding it would take more than
    :data:`_DIFF_STEPS` steps: the caller gives such texts to ``git merge-file``.
    """
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a, end_b = end_a - 1, end_b - 1
    pairs = [(i, i) for i in range(start)]
    if end_a > start and end_b > start:
        middle = _myers(a[start:end_a], b[start:end_b])
        if middle is None:
            return None
        pairs += [(start + i, start + j) for i, j in middle]
    pairs += [(end_a + k, end_b + k) for k in range(len(a) - end_a)]
    return pairs


def _myers(a: list[str], b: list[str]) -> list[tuple[int, int]] | None:
    """The matched lines of a shortest edit script from ``a`` to ``b``; None past the bound."""
    n, m = len(a), len(b)
    offset = n + m + 1
    v = [0] * (2 * offset + 1)
    trace: list[list[int]] = []  # for each d, the furthest x on diagonals -d..d before it
    steps = 0
    for d in range(n + m + 1):
        trace.append(v[offset - d : offset + d + 1])
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]  # down: a line of b added
            else:
                x = v[offset + k - 1] + 1  # right: a line of a removed
            y = start = x - k
            while x < n and y < m and a[x] == b[y]:
                x, y = x + 1, y + 1
            v[offset + k] = x
            steps += 1 + y - start
            if x >= n and y >= m:
                return _path(trace, d, n, m)
        if steps > _DIFF_STEPS:
            return None
    raise AssertionError("unreachable: an edit script of n + m steps always exists")


def _path(trace: list[list[int]], d: int, n: int, m: int) -> list[tuple[int, int]]:
    """The diagonal steps (lines kept) of the path :func:`_myers` reached ``(n, m)`` by."""
    pairs: list[tuple[int, int]] = []
    x, y = n, m
    for step in range(d, 0, -1):
        before = trace[step]  # diagonals -step..step, as they were after step - 1

        def at(k: int, before: list[int] = before, step: int = step) -> int:
            return before[k + step]

        k = x - y
        down = k == -step or (k != step and at(k - 1) < at(k + 1))
        prev_k = k + 1 if down else k - 1
        prev_x = at(prev_k)
        mid_x = prev_x if down else prev_x + 1
        while x > mid_x:
            x, y = x - 1, y - 1
            pairs.append((x, y))
        x, y = prev_x, prev_x - prev_k
    while x > 0 and y > 0:
        x, y = x - 1, y - 1
        pairs.append((x, y))
    pairs.reverse()
    return pairs


def _chunks(base: list[str], ours: list[str], theirs: list[str]
            ) -> list[list[str] | dict[str, list[str]]] | None:
    """The three-way merge of line lists: kept lines, and regions both sides changed.

    A base line both sides kept anchors the merge; between two anchors, a stretch
    only one side changed takes that change, one both changed alike takes it once,
    and one both changed differently is a region (``ours``, ``base``, ``theirs``)
    for :func:`_resolve`, as ``git merge-file --diff3`` marks it. None when a diff
    is past the bound.
    """
    to_ours, to_theirs = _matches(base, ours), _matches(base, theirs)
    if to_ours is None or to_theirs is None:
        return None
    in_ours, in_theirs = dict(to_ours), dict(to_theirs)
    out: list[list[str] | dict[str, list[str]]] = []
    kept: list[str] = []
    b = o = t = 0
    for i in [*sorted(set(in_ours) & set(in_theirs)), len(base)]:
        end_o, end_t = (in_ours[i], in_theirs[i]) if i < len(base) else (len(ours), len(theirs))
        old, mine, other = base[b:i], ours[o:end_o], theirs[t:end_t]
        if mine == other or old == other:
            kept += mine
        elif old == mine:
            kept += other
        else:
            if kept:
                out.append(kept)
                kept = []
            out.append({"ours": mine, "base": old, "theirs": other})
        if i < len(base):
            kept.append(base[i])
        b, o, t = i + 1, end_o + 1, end_t + 1
    if kept:
        out.append(kept)
    return out


_HELD: Final = "<!-- memdir-conflict-held "


def _hold(text: str, held: dict[str, str]) -> str:
    """``text`` with each conflict block it holds folded into one line naming its content.

    The line merge then moves a block as a whole: it is never cut in two, and a
    change inside a block (an edit between its lines) is a change of that line.
    """
    blocks = find_blocks(text)
    if not blocks:
        return text
    lines = text.split("\n")
    for block in reversed(blocks):
        whole = "\n".join(lines[block.first - 1 : block.last])
        key = f"{_HELD}{hashlib.sha256(whole.encode(_ENCODING, _ERRORS)).hexdigest()[:24]} -->"
        held[key] = whole
        lines[block.first - 1 : block.last] = [key]
    return "\n".join(lines)


def _unhold(text: str, held: dict[str, str]) -> str:
    if not held:
        return text
    return "\n".join(held.get(line, line) for line in text.split("\n"))


def _join(ours: list[str], theirs: list[str]) -> list[str]:
    """Two sides' additions at one place, together: lines both added once, the rest in order."""
    if len(ours) * len(theirs) > 4_000_000:
        return ours + theirs  # too long to align cheaply: keep all of both
    matcher = difflib.SequenceMatcher(None, ours, theirs, autojunk=False)
    out: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        out += ours[i1:i2] if tag == "equal" else ours[i1:i2] + theirs[j1:j2]
    return out


def _resolve(region: dict[str, list[str]], path: str, labels: Labels,
             held: dict[str, str]) -> tuple[list[str], int, int]:
    """One conflict region as lines to keep: trimmed, joined if both only added, else a block."""
    ours, base, theirs = region["ours"], region["base"], region["theirs"]
    head: list[str] = []
    while ours and theirs and ours[0] == theirs[0]:
        head.append(ours.pop(0))
        theirs.pop(0)
    tail: list[str] = []
    while ours and theirs and ours[-1] == theirs[-1]:
        tail.insert(0, ours.pop())
        theirs.pop()
    if not ours and not theirs:
        return head + tail, 0, 0
    if not base:
        # Both sides only added lines here (nothing was there before): keep both.
        return head + _join(ours, theirs) + tail, 0, 1
    versions = _fullest(_versions(ours, labels.ours, held)
                        + _versions(theirs, labels.theirs, held))
    if len(versions) == 1:
        return head + versions[0][1].split("\n") + tail, 0, 0
    block = render_block(block_id(path, *(text for _, text in versions)), LINES_WHAT, versions)
    return head + block.rstrip("\n").split("\n") + tail, 1, 0


def _fullest(versions: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The versions that keep something no other version keeps.

    A version whose lines all appear in another version (a removal against an
    edit, an edit that only added to the other's, the same lines in another
    order) is left out: keeping the fuller one loses nothing. Among versions with
    the same lines the one whose text, then label, sorts first stays, whichever
    side it came from, so replicas that made the same change in different orders,
    or merged the same two versions each under its own name, agree (else two
    replicas merging the same pair would make two different files, and merging
    those again would never settle).
    """
    counted = [(label, text, Counter(text.split("\n")) if text else Counter())
               for label, text in versions]
    kept: list[tuple[str, str]] = []
    for n, (label, text, lines) in enumerate(counted):
        covered = any(
            lines <= other and (lines != other
                                or (other_text, other_label, m) < (text, label, n))
            for m, (other_label, other_text, other) in enumerate(counted) if m != n
        )
        if not covered:
            kept.append((label, text))
    return kept


def _versions(lines: list[str], label: str, held: dict[str, str]) -> list[tuple[str, str]]:
    """The versions one side's lines add to a conflict block.

    A conflict block already among them is not nested inside the new one: its
    versions join the new block as versions of their own, so conflicts over
    conflicts stay one level deep and grow by the versions they add, never by
    copies of copies. The side's other lines are its own version.
    """
    kept = [line for line in lines if line not in held]
    found: list[tuple[str, str]] = []
    if kept or len(kept) == len(lines):
        found.append((label + ("" if lines else " (removed these lines)"), "\n".join(kept)))
    for line in lines:
        if line in held:
            blocks = find_blocks(held[line])
            found += list(blocks[0].versions) if blocks else [(label, held[line])]
    return found
# -- the driver -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Run as git's merge driver: ``%O %A %B %P``; the result replaces ``%A``.

    Exits 0 whenever a merged file was written (conflicts are kept inside it),
    1 if even that failed, which git reports as a conflict for ``memdir sync``
    to settle.
    """
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 4:
        print("usage: python -m memdir.store._merge BASE OURS THEIRS PATH", file=sys.stderr)
        return 2
    base_file, ours_file, theirs_file, path = args
    try:
        base = Path(base_file).read_bytes()
        ours = Path(ours_file).read_bytes()
        theirs = Path(theirs_file).read_bytes()
        merged = merge_bytes(base, ours, theirs, path, Labels.from_environment())
        Path(ours_file).write_bytes(merged.data)
    except Exception as exc:  # the merge must not be lost silently: git reports the file
        print(f"memdir merge driver: {path}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
