"""Cross-references that a delete, a rename or an edit leaves pointing at nothing.

A tool that removes or moves a file (or a heading) never rewrites the files
that point at it; instead its result ends with a note naming them, so the
model can repair them at once rather than leave ``memdir lint`` to find them.
The scan reads only files whose bytes mention the old path (references are
always written as full ``/memories/...`` paths), so it costs a read of the
store and a parse of the few files that could be affected.
"""

from __future__ import annotations

from memdir.store import ROOT, Store, StoreError, XRef, check_xref, headings, parse_file, xrefs

__all__ = ["broken_by_edit", "moved_note", "pointing_at"]

_MAX_LISTED = 10
"""Most referring places a note lists by name; the rest are counted."""


def pointing_at(store: Store, gone: str) -> list[tuple[str, XRef]]:
    """Every reference (file, reference) to ``gone`` or to a file below it, in path order.

    Args:
        store: The store, after the change.
        gone: A file or folder path that no longer exists.
    """
    needle = gone.encode("utf-8")
    folder = gone.rstrip("/") + "/"
    nodes = sorted((n for n in store.tree() if n.kind == "memory"), key=lambda n: n.virtual)
    found: list[tuple[str, XRef]] = []
    for node, data in store.read_nodes(nodes):
        if data is None or needle not in data:
            continue
        text = data.decode("utf-8", errors="replace")
        found.extend((node.virtual, ref) for ref in xrefs(text)
                     if ref.target == gone or ref.target.startswith(folder))
    return found


def _places(found: list[tuple[str, XRef]]) -> str:
    shown = [f"{path}:{ref.line}" for path, ref in found[:_MAX_LISTED]]
    more = len(found) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more else "")


def moved_note(store: Store, old: str, new: str | None) -> str:
    """The note a delete (``new`` None) or rename adds when references to ``old`` remain.

    Returns an empty string when nothing points at ``old`` any more.
    """
    found = pointing_at(store, old)
    if not found:
        return ""
    files = len({path for path, _ in found})
    fix = (f"replace {old} with {new} there" if new is not None
           else "point them at another file or remove them")
    return (f"\nNote: {len(found)} reference(s) in {files} file(s) still point at {old}, "
            f"which no longer exists: {_places(found)}. Edit them: {fix}.")


def broken_by_edit(store: Store, path: str, before: str, after: str) -> str:
    """The note an edit of ``path`` adds when it left references pointing at nothing.

    Two kinds are reported: references written in the edited file that resolve to
    nothing, and references elsewhere to a section of ``path`` whose heading the
    edit removed or renamed.

    Returns an empty string when the edit broke no reference.
    """
    notes: list[str] = []
    old_refs = {(r.target, r.section) for r in xrefs(before)}
    new_bad = []
    for ref in xrefs(after):
        if (ref.target, ref.section) in old_refs:
            continue  # was there before the edit; lint reports old defects
        try:
            problem = check_xref(store, ref)
        except StoreError:
            problem = f"{ref.target} cannot be read"
        if problem is not None:
            new_bad.append(f"line {ref.line}: {problem}")
    if new_bad:
        notes.append(f"\nNote: a reference written in {path} points at nothing "
                     f"({'; '.join(new_bad[:_MAX_LISTED])}). Fix the path or the section "
                     f"name (view {ROOT} to see the files).")
    lost = _headings(before) - _headings(after)
    if lost:
        broken = [(p, r) for p, r in pointing_at(store, path)
                  if p != path and r.target == path and r.section and r.section[-1] in lost
                  and check_xref(store, r) is not None]
        if broken:
            notes.append(f"\nNote: the edit removed a heading that {len(broken)} reference(s) "
                         f"point at: {_places(broken)}. Restore the heading or edit those "
                         "references.")
    return "".join(notes)


def _headings(text: str) -> set[str]:
    parsed = parse_file(text)
    return {h.text for h in headings(parsed.body)}
