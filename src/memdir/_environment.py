"""The ``MEMDIR_*`` environment variables, and the plain ones read without pydantic.

:class:`memdir.config.Settings` is the one definition of memdir's settings and
the only judge of a value; this module holds what it reads (:func:`given`) and
a shortcut for a process that must start fast (a ``memdir tool`` search, whose
whole run is shorter than importing pydantic): :func:`plain_settings` reads the
values that need no judging, and gives up (None) on anything else, leaving it
to the model. ``tests/test_environment.py`` holds its answers to the model's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = ["ENV_PREFIX", "MODEL_ONLY", "PLAIN_DEFAULTS", "PlainSettings", "given", "plain_settings"]

ENV_PREFIX: Final = "MEMDIR_"
"""Every setting ``name`` is read from the environment variable ``MEMDIR_NAME``."""

PLAIN_DEFAULTS: Final[Mapping[str, int | float | str | None]] = {
    "model": None,
    "max_file_bytes": 512 * 1024,
    "tool_time_limit": 5.0,
    "tool_output_chars": 160_000,
    "ask_timeout": 60,
    "model_timeout": 900,
}
"""The settings :func:`plain_settings` reads, with the defaults of :class:`memdir.config.Settings`
(a test holds the two equal), each of type ``str | None``, a positive int or a positive float."""

_INT: Final = re.compile(r"[1-9][0-9]{0,17}")
_FLOAT: Final = re.compile(r"(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?")
"""Decimal numbers that read the same to pydantic as to ``int`` and ``float``."""


def given(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The ``MEMDIR_*`` variables of ``environ`` (default: this process's), names upper-cased."""
    environ = os.environ if environ is None else environ
    return {key.upper(): value for key, value in environ.items()
            if key.upper().startswith(ENV_PREFIX)}


@dataclass(frozen=True, slots=True)
class PlainSettings:
    """The settings of :data:`PLAIN_DEFAULTS`, as :class:`memdir.config.Settings` holds them."""

    model: str | None
    max_file_bytes: int
    tool_time_limit: float
    tool_output_chars: int
    ask_timeout: int
    model_timeout: int


def plain_settings(environ: Mapping[str, str] | None = None) -> PlainSettings | None:
    """The values of :data:`PLAIN_DEFAULTS`' settings, if the settings model need not be asked.

    That is when every ``MEMDIR_*`` variable that names a setting names one of
    those, and holds a value whose reading is plain: a decimal number written
    without sign, exponent, blanks or leading zeros for a number (positive), any
    text that UTF-8 can hold for ``model``. Then
    :meth:`memdir.config.Settings.from_environment` gives these same values and
    accepts the rest. Otherwise None, and the caller asks the model, which also
    says what is wrong.

    Args:
        environ: The variables (default: this process's).
    """
    values = dict(PLAIN_DEFAULTS)
    for variable, text in given(environ).items():
        name = _NAMES.get(variable)
        if name is None:
            if variable in _MODEL_ONLY:
                return None  # a setting only the model reads (a path, a secret)
            continue  # no setting of that name: the model ignores it too
        default = PLAIN_DEFAULTS[name]
        if default is None:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                return None
            values[name] = text
        elif isinstance(default, int):
            if not _INT.fullmatch(text):
                return None
            values[name] = int(text)
        else:
            if not _FLOAT.fullmatch(text) or float(text) <= 0:
                return None
            values[name] = float(text)
    return PlainSettings(**values)  # type: ignore[arg-type]  # each checked above


MODEL_ONLY: Final = ("mcp_token", "data_dir", "cache_dir")
"""The other settings of :class:`memdir.config.Settings` (a test holds the list whole)."""
_NAMES: Final = {ENV_PREFIX + name.upper(): name for name in PLAIN_DEFAULTS}
_MODEL_ONLY: Final = frozenset(ENV_PREFIX + name.upper() for name in MODEL_ONLY)
