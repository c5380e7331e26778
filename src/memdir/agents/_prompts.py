"""Prompts as package data, assembled from shared blocks.

Each prompt is a file ``prompts/<name>.md``. ``{{> block}}`` includes
``prompts/blocks/<block>.md`` (a whole line, or inside a line for a sentence a
harness rewords; blocks may include blocks); ``{{field}}`` is filled from keyword
arguments. The prompts of one role family are built from the same blocks in the
same order, so a variant differs only in the block its store form needs.

A prompt named ``<name>@<harness>`` is ``<name>`` as sent under that harness:
each tool block the harness rewords (:data:`memdir.tools.HARNESS_SPECS`) is
replaced by the harness's own block, and everything else stays byte for byte.
A prompt's hash is the SHA-256 of its final text, and goes into every record
that used it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from memdir.tools._harness import harness_spec, split_prompt_name

__all__ = ["Prompt", "load_prompt", "prompt_blocks", "prompt_fields", "prompt_names"]

_INCLUDE = re.compile(r"\{\{> *([a-z0-9-]+) *\}\}")
_MAX_DEPTH = 4
_FIELD = re.compile(r"\{\{([a-z_]+)\}\}")


@dataclass(frozen=True)
class Prompt:
    """A prompt's name and final text."""

    name: str
    text: str

    @property
    def sha256(self) -> str:
        """SHA-256 of the final text (hex)."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def _folder() -> resources.abc.Traversable:
    return resources.files("memdir.agents").joinpath("prompts")


@cache
def _read(relative: str) -> str:
    node = _folder().joinpath(relative)
    if not node.is_file():
        raise KeyError(relative)
    return node.read_text(encoding="utf-8")


@cache
def prompt_names() -> tuple[str, ...]:
    """Every prompt shipped with memdir."""
    return tuple(
        sorted(p.name[:-3] for p in _folder().iterdir() if p.name.endswith(".md"))
    )


def prompt_blocks(name: str) -> list[str]:
    """The blocks a prompt's own file includes, in order (not the blocks' blocks)."""
    return _INCLUDE.findall(_template(name))


def prompt_fields(name: str) -> list[str]:
    """The fields prompt ``name`` takes (its blocks' included), in order of first use."""
    return list(dict.fromkeys(_FIELD.findall(_expanded(name))))


def _template(name: str) -> str:
    base, _ = split_prompt_name(name)
    try:
        return _read(f"{base}.md")
    except KeyError:
        raise ValueError(
            f"unknown prompt {name!r}; choose one of {', '.join(prompt_names())}"
        ) from None


def load_prompt(name: str, **fields: str) -> Prompt:
    """The final text of prompt ``name`` with its blocks included and fields filled.

    Raises:
        ValueError: The prompt or a block does not exist, a field is missing, or an
            unused field was given.
    """
    text = _expanded(name)
    wanted = set(_FIELD.findall(text))
    missing = wanted - fields.keys()
    extra = fields.keys() - wanted
    if missing or extra:
        raise ValueError(
            f"prompt {name} takes the fields {sorted(wanted) or 'none'}; "
            f"missing {sorted(missing)}, unexpected {sorted(extra)}"
        )
    # Fill in one pass so a value that itself contains {{...}} is left alone.
    text = _FIELD.sub(lambda m: fields[m.group(1)], text)
    return Prompt(name, text.strip() + "\n")


def _expanded(name: str) -> str:
    """The template of prompt ``name`` with its blocks included, fields not yet filled.

    Raises:
        ValueError: The prompt, its harness or a block does not exist, or blocks
            include each other deeper than a few levels.
    """
    _, harness = split_prompt_name(name)
    swap = harness_spec(harness).blocks

    def expand(text: str, depth: int) -> str:
        if depth > _MAX_DEPTH:
            raise ValueError(f"prompt {name}: blocks include blocks more than {_MAX_DEPTH} deep")
        return _INCLUDE.sub(lambda match: include(match.group(1), depth), text)

    def include(block: str, depth: int) -> str:
        block = swap.get(block, block)
        try:
            text = _read(f"blocks/{block}.md").rstrip("\n")
        except KeyError:
            raise ValueError(f"prompt {name} includes a missing block {block}") from None
        return expand(text, depth + 1)

    return expand(_template(name), 1)
