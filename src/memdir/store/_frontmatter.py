"""Frontmatter: the YAML header every memory file opens with.

A file starts on line 1 with ``---``, then YAML with ``name`` (a kebab-case slug
equal to the file stem), ``description`` (one short line) and optionally
``metadata`` (a free map), then ``---``. Keys memdir does not know are kept as
they are. Parsing never raises on bad input: it returns the defects it found so
that callers (lint, the tools, the health report) can say what is wrong.

This module is the one reader of frontmatter YAML (:func:`load_header`). It is
bounded: nesting deeper than :data:`MAX_NESTING` and documents whose aliases
would expand to more than :data:`MAX_NODES` nodes are refused as invalid YAML, so
a few hundred bytes can neither exhaust memory nor the interpreter's stack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import yaml

    from memdir.store._models import Frontmatter, SkillMetadata, SkillSource

# The header models are pydantic classes, built on first use (see ``__getattr__``):
# building them costs more than the rest of the store's imports together, and a
# search or a listing never validates a header.
_MODELS = ("Frontmatter", "SkillMetadata", "SkillSource")


def __getattr__(name: str) -> Any:
    if name in _MODELS:
        from memdir.store import _models

        return getattr(_models, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "DESCRIPTION_MAX_CHARS",
    "MAX_NESTING",
    "MAX_NODES",
    "Defect",
    "Frontmatter",
    "ParsedFile",
    "description_and_body",
    "description_of",
    "entry_sources",
    "load_header",
    "SkillMetadata",
    "SkillSource",
    "parse_file",
    "render_file",
    "slugify",
    "validate_skill_metadata",
]

DESCRIPTION_MAX_CHARS = 200
"""Longest description accepted as 'one short line'."""

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")

MAX_NESTING = 64
"""Deepest nesting of lists and mappings accepted in a header."""
MAX_NODES = 10_000
"""Most YAML nodes a header may stand for once its aliases are expanded."""

_YAML_SPECIAL = tuple("'\"|>[{&*!%@`#")


@cache
def _bounded_loader() -> type[yaml.SafeLoader]:
    """The safe loader class that refuses nesting deeper than :data:`MAX_NESTING`.

    Built on first use, so importing the store never loads PyYAML (start-up).
    """
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self._depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self._depth += 1
            try:
                if self._depth > MAX_NESTING:
                    raise yaml.YAMLError(
                        f"the header nests lists or mappings more than {MAX_NESTING} deep"
                    )
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

    return BoundedLoader


def _expanded_size(root: yaml.Node) -> int:
    """How many nodes ``root`` stands for with every alias expanded (memoised, iterative).

    Raises:
        yaml.YAMLError: An alias refers to a node that contains it (``&m {self: *m}``):
            expanded, it would never end.
    """
    import yaml

    sizes: dict[int, int] = {}
    # The nodes being expanded: each one's "ready" marker is on the stack, so they are
    # the ancestors of whatever is taken next; meeting one again is a cycle.
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        key = id(node)
        if ready:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in _children(node))
            if sizes[key] > MAX_NODES:
                return sizes[key]
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise yaml.YAMLError(
                "the header has an alias inside the value it names (such as "
                "'&m {self: *m}'), which never ends; write the value out instead"
            )
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in sizes)
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def load_header(header: str) -> Any:
    """Parse frontmatter YAML safely: no tags, bounded nesting and alias expansion.

    Raises:
        yaml.YAMLError: The text is not valid YAML, or over one of the bounds.
    """
    flat = _flat_header(header)
    return flat if flat is not None else _yaml_header(header)


def _yaml_header(header: str) -> Any:
    """:func:`load_header` by the YAML parser itself."""
    import yaml

    if _bracket_depth(header) > MAX_NESTING:
        raise yaml.YAMLError(f"the header nests lists or mappings more than {MAX_NESTING} deep")
    loader = _bounded_loader()(header)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_size(node) > MAX_NODES:
            raise yaml.YAMLError(
                f"the header's aliases expand to more than {MAX_NODES:,} values; write the "
                "values out instead of repeating anchors"
            )
        return loader.construct_document(node)
    except RecursionError:
        raise yaml.YAMLError("the header nests too deep") from None
    finally:
        loader.dispose()


_FLAT_LINE = re.compile(r"([A-Za-z][A-Za-z0-9_-]{0,127}): +([^ ].*)")
_PLAIN_FIRST = frozenset("-?:,[]{}#&*!|>'\"%@`")
_PLAIN_CHARS = re.compile("[\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*")


@cache
def _str_resolver() -> Any:
    import yaml

    return yaml.resolver.Resolver()


@cache
def _implicit_firsts() -> frozenset[str] | None:
    """The first characters YAML's implicit rules (numbers, booleans, ...) look at.

    A plain scalar that starts with any other character is a string; None when
    some rule looks at every scalar (none of PyYAML's does).
    """
    resolver = _str_resolver()
    table = resolver.yaml_implicit_resolvers
    if None in table or resolver.yaml_path_resolvers:
        return None
    return frozenset(table)


def _flat_header(header: str) -> dict[str, str] | None:
    """A header of ``key: plain text`` lines read without the YAML parser, or None.

    Only lines a YAML reader takes as one plain string each are read here (a word
    key at the margin, one or more spaces, then text that starts with no indicator,
    has no ``': '``, ``' #'``, tab or line break, does not end in ``':'``, and that
    YAML's implicit rules leave a string, not a number, date, boolean or null);
    any other header returns None and goes to :func:`load_header`'s parser. A
    property test checks that both readings agree.
    """
    import yaml

    found: dict[str, str] = {}
    resolve = _str_resolver().resolve
    firsts = _implicit_firsts()
    for line in header.split("\n"):
        if not line:
            continue
        match = _FLAT_LINE.fullmatch(line)
        if match is None:
            return None
        key, value = match.group(1), match.group(2).rstrip(" ")
        if (value[0] in _PLAIN_FIRST or value.endswith(":") or ": " in value or " #" in value
                or _PLAIN_CHARS.fullmatch(value) is None):
            return None
        for text in (key, value):
            if firsts is not None and text[0] not in firsts:
                continue  # no implicit rule reads it: a string
            if resolve(yaml.ScalarNode, text, (True, False)) != "tag:yaml.org,2002:str":
                return None
        found[key] = value
    return found or None  # no key at all: YAML reads no document (None), not a mapping


def _bracket_depth(text: str) -> int:
    """The deepest bracket nesting in ``text`` (a cheap over-estimate of flow nesting).

    Lets a header of thousands of ``[`` be refused before the YAML scanner reads
    every one of them; balanced brackets in plain text never add up.
    """
    if text.count("[") + text.count("{") <= MAX_NESTING:
        return 0
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}" and depth:
            depth -= 1
    return deepest


def _description_line(header: str) -> int:
    """Where the first line that starts with ``description:`` starts, or -1 if none does.

    What ``re.search(r"^description:", header, re.MULTILINE)`` finds, without a regex
    tried at every character of the header.
    """
    if header.startswith("description:"):
        return 0
    at = header.find("\ndescription:")
    return at + 1 if at >= 0 else -1


def description_of(head: str) -> str | None:
    """The description in the frontmatter at the start of ``head``, for listings.

    ``head`` may be just the start of a file, as long as the header is complete.
    The result is one line, cut to :data:`DESCRIPTION_MAX_CHARS` characters with a
    mark; None when there is no header or no description.
    """
    head = head.removeprefix("\ufeff")
    if not head.startswith("---"):
        return None
    end = head.find("\n---", 3)
    if end < 0:
        return None
    header = head[4:end]
    value: str | None = None
    at = _description_line(header)
    if at >= 0:
        stop = header.find("\n", at)
        simple = header[at + 12 : stop if stop >= 0 else None].strip(" \t")
        plain = not simple.startswith(_YAML_SPECIAL) and ": " not in simple
        if simple and plain and " #" not in simple:
            value = simple
    if value is None:
        import yaml

        try:
            data = load_header(header)
        except yaml.YAMLError:
            return None
        if not isinstance(data, dict) or data.get("description") is None:
            return None
        value = " ".join(str(data["description"]).split())
    if len(value) > DESCRIPTION_MAX_CHARS:
        value = value[:DESCRIPTION_MAX_CHARS] + " [...]"
    return value

DefectCode = Literal[
    "missing-frontmatter",
    "unclosed-frontmatter",
    "invalid-yaml",
    "invalid-frontmatter",
    "missing-name",
    "bad-name",
    "name-mismatch",
    "missing-description",
    "multiline-description",
    "long-description",
    "bad-description",
    "bad-metadata",
]


@dataclass(frozen=True, slots=True)
class Defect:
    """One way a file breaks the store contract."""

    code: str
    message: str
    line: int | None = None
    fixable: bool = False


@dataclass(slots=True)
class ParsedFile:
    """A memory file split into header and body, with every defect found."""

    frontmatter: Frontmatter | None
    raw_header: dict[str, Any] | None
    body: str
    body_line: int
    """1-based line number of the body's first line in the whole file."""
    defects: list[Defect] = field(default_factory=list)


def slugify(text: str) -> str:
    """Turn arbitrary text into a kebab-case slug usable as a file stem."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug or "untitled"


_CLOSING_LINE = re.compile(r"\n---\r*(?=\n|\Z)")
"""A line that is ``---`` (a CR or more after it allowed), with the line break before it."""


def _split(text: str) -> tuple[str | None, str, int, Defect | None]:
    """Return (header text, body, body line, defect).

    The header is the lines after line 1 (``---``) up to the first line that is
    ``---`` again, each compared without its final CRs; found with ``find`` and a
    regex rather than by splitting the whole file into lines and joining them back.
    """
    first_end = text.find("\n")
    first = text if first_end < 0 else text[:first_end]
    if first.lstrip("\ufeff").rstrip("\r") != "---":
        return None, text, 1, Defect(
            "missing-frontmatter",
            "The file does not open with frontmatter. Line 1 must be '---', followed by "
            "'name: <file-stem>' and 'description: <one line>', then '---'.",
            line=1,
            fixable=True,
        )
    closing = _CLOSING_LINE.search(text, first_end) if first_end >= 0 else None
    if closing is not None:
        start, end = closing.span()
        index = text.count("\n", 0, start + 1)  # the closing line's number, from 0
        return text[first_end + 1 : start], text[end + 1 :], index + 2, None
    return None, text, 1, Defect(
        "unclosed-frontmatter",
        "The frontmatter opened on line 1 is never closed; add a line '---' after it.",
        line=1,
    )


def description_and_body(text: str) -> tuple[str, str, int]:
    """A file's description, body and body line, as :func:`parse_file` reads them.

    The description is that of ``parse_file(text).frontmatter`` (empty when it is
    None). A header of plain ``key: text`` lines (most headers) is read without
    the checks and the model that only defects need; any other goes through
    :func:`parse_file`.
    """
    header, body, body_line, defect = _split(text)
    if defect is not None:
        return "", body, body_line
    assert header is not None
    flat = _flat_header(header)
    if flat is None:
        parsed = parse_file(text)
        return (parsed.frontmatter.description if parsed.frontmatter else ""), body, body_line
    # Every value is a string: the model takes them all but a 'metadata', which must
    # be a mapping, so with one the file has no usable frontmatter.
    return ("" if "metadata" in flat else flat.get("description", "")), body, body_line


def parse_file(text: str, stem: str | None = None) -> ParsedFile:
    """Parse a memory file and collect its contract defects.

    Args:
        text: The whole file.
        stem: The file's stem; when given, ``name`` must equal it.

    Returns:
        The parsed file. ``frontmatter`` is None when the header is missing or
        unusable; ``defects`` lists every problem found.
    """
    header, body, body_line, defect = _split(text)
    if defect is not None:
        return ParsedFile(None, None, body, body_line, [defect])
    assert header is not None
    import yaml  # imported on first parse, so commands that never parse skip it

    try:
        raw = load_header(header) if header.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        return ParsedFile(
            None,
            None,
            body,
            body_line,
            [Defect("invalid-yaml", f"The frontmatter is not valid YAML: {exc}", line=line)],
        )
    if not isinstance(raw, dict):
        return ParsedFile(
            None,
            None,
            body,
            body_line,
            [Defect("invalid-frontmatter", "The frontmatter must be a YAML mapping.", line=2)],
        )
    raw = {str(k): v for k, v in raw.items()}
    defects = _check_header(raw, stem)
    from pydantic import ValidationError

    from memdir.store._models import Frontmatter

    try:
        fm = Frontmatter.model_validate(
            {**raw, "name": str(raw.get("name", "")), "description": _desc_text(raw)}
        )
    except ValidationError as exc:
        if not any(d.code == "bad-metadata" for d in defects):
            defects.append(
                Defect("bad-metadata", f"metadata must be a mapping: {exc.errors()[0]}")
            )
        fm = None
    return ParsedFile(fm, raw, body, body_line, defects)


def _desc_text(raw: dict[str, Any]) -> str:
    value = raw.get("description")
    return "" if value is None else str(value)


def _check_header(raw: dict[str, Any], stem: str | None) -> list[Defect]:
    defects: list[Defect] = []
    name = raw.get("name")
    if name is None or str(name).strip() == "":
        defects.append(
            Defect("missing-name", "The frontmatter has no 'name'; add 'name: <file-stem>'.",
                   fixable=stem is not None)
        )
    elif not SLUG.match(str(name)):
        defects.append(
            Defect(
                "bad-name",
                f"name {name!r} is not a kebab-case slug (lowercase letters, digits, "
                f"single hyphens), e.g. {slugify(str(name))!r}.",
                fixable=stem is not None and SLUG.match(stem) is not None,
            )
        )
    elif stem is not None and str(name) != stem:
        defects.append(
            Defect(
                "name-mismatch",
                f"name {name!r} differs from the file stem {stem!r}; they must be equal.",
                fixable=SLUG.match(stem) is not None,
            )
        )
    desc = raw.get("description")
    if desc is None or str(desc).strip() == "":
        defects.append(
            Defect("missing-description",
                   "The frontmatter has no 'description'; add one short line saying "
                   "what the file holds.")
        )
    elif isinstance(desc, (list, dict)):
        defects.append(
            Defect("bad-description",
                   "The description must be one line of plain text, not a list or mapping.")
        )
    else:
        text = str(desc)
        if "\n" in text.strip():
            defects.append(
                Defect("multiline-description",
                       "The description spans several lines; make it one short line.",
                       fixable=True)
            )
        if len(text) > DESCRIPTION_MAX_CHARS:
            defects.append(
                Defect("long-description",
                       f"The description has {len(text)} characters; keep it under "
                       f"{DESCRIPTION_MAX_CHARS}.")
            )
    metadata = raw.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        defects.append(Defect("bad-metadata", "'metadata' must be a mapping of keys to values."))
    return defects


def validate_skill_metadata(fm: Frontmatter, body: str | None = None) -> list[Defect]:
    """Check the skill setting's schema: ``metadata.type`` and the entry's sources.

    The sources are ``metadata.sources`` and, when ``body`` is given, the items of
    its Sources section (:mod:`memdir.store._sources`); together they must name at
    least one attempt, and every item of the section must be a (task, outcome) pair.
    """
    if fm.metadata is None:
        return [Defect("bad-metadata",
                       "Skill-library entries need metadata with 'type' (skill or note) and "
                       "their sources: 'metadata.sources' (a list of {task, outcome}) or a "
                       "'## Sources' section in the body.")]
    from pydantic import ValidationError

    from memdir.store._models import SkillMetadata
    from memdir.store._sources import find_sources_section

    problems: list[str] = []
    listed = 0
    try:
        listed = len(SkillMetadata.model_validate(fm.metadata).sources)
    except ValidationError as exc:
        problems += [f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
                     for err in exc.errors()]
    section = find_sources_section(body) if body is not None else None
    if section is not None:
        problems += [f"the Sources section's line {line!r} names no task and outcome "
                     "(write it as '- {task: <task id>, outcome: success}')"
                     for line in section.problems]
        listed += len(section.pairs)
    if not listed and not any(p.startswith("sources") for p in problems):
        where = "metadata.sources or a '## Sources' section" if body is not None else (
            "metadata.sources")
        problems.append(f"sources: no attempt is recorded; list the attempts the entry came "
                        f"from, each with its outcome, in {where}")
    if problems:
        return [Defect("bad-metadata",
                       f"metadata does not fit the skill schema: {'; '.join(problems)}")]
    return []


def entry_sources(fm: Frontmatter, body: str) -> list[tuple[str, str]]:
    """Every (task, outcome) an entry records: ``metadata.sources``, then its Sources section.

    Entries that fail :func:`validate_skill_metadata` give what can be read of them.
    """
    from memdir.store._sources import find_sources_section

    pairs: list[tuple[str, str]] = []
    raw = fm.metadata.get("sources") if fm.metadata is not None else None
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, dict) and item.get("outcome") in ("success", "failure"):
                pairs.append((str(item.get("task")), str(item["outcome"])))
    section = find_sources_section(body)
    if section is not None:
        pairs += section.pairs
    return pairs


def render_file(frontmatter: Frontmatter, body: str) -> str:
    """Assemble a memory file from its header and body."""
    body = body.lstrip("\n")
    return f"---\n{frontmatter.to_yaml()}---\n{body}"
