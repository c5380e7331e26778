"""memdir's settings: one object, read from ``MEMDIR_*`` environment variables.

Nothing else in memdir reads the environment; code that needs a setting takes
it as an argument, and the command line fills those from :func:`get_settings`.
Config files (a study, a skills run) are read by :func:`load_yaml_model`. A
process that must start fast reads the plain settings through
:func:`memdir._environment.plain_settings` instead, which never disagrees with
:class:`Settings` and hands anything less plain to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from memdir._environment import ENV_PREFIX, given
from memdir.store import DEFAULT_MAX_FILE_BYTES

__all__ = ["ENV_PREFIX", "Settings", "SettingsError", "get_settings", "load_yaml_model"]

M = TypeVar("M", bound=BaseModel)


class SettingsError(ValueError):
    """A ``MEMDIR_*`` environment variable holds a value its setting cannot take.

    Attributes:
        variables: The names of the offending variables, in the message's order.
    """

    def __init__(self, message: str, variables: list[str]) -> None:
        super().__init__(message)
        self.variables = variables


class Settings(BaseModel):
    """Settings shared by the library's entry points and the command line."""

    model_config = ConfigDict(extra="ignore")

    model: str | None = Field(
        default=None,
        description="Default model as provider/model (e.g. openai/gpt-5.4-mini); "
        "None means the offline policy.",
    )
    max_file_bytes: int = Field(default=DEFAULT_MAX_FILE_BYTES, gt=0,
                                description="Largest file a write may produce.")
    tool_time_limit: float = Field(default=5.0, gt=0,
                                   description="Seconds one tool call may run (a shell call "
                                   "has its own fixed limit, see docs/limits.md).")
    tool_output_chars: int = Field(default=160_000, gt=0,
                                   description="Longest tool result shown to a model; longer "
                                   "ones are cut with a note.")
    ask_timeout: int = Field(
        default=60, gt=0,
        description="Seconds one model call of `memdir ask` may take, retries included.",
    )
    model_timeout: int = Field(
        default=900, gt=0,
        description="Seconds one model call may take, retries included, everywhere else "
        "(studies, builds, ingest).",
    )
    mcp_token: SecretStr | None = Field(
        default=None, description="Bearer token the MCP server requires over http."
    )
    data_dir: Path | None = Field(default=None,
                                  description="Where benchmark files live (LoCoMo, ...).")
    cache_dir: Path = Field(default=Path("~/.cache/memdir"),
                            description="Cache for built stores and tokenizer files.")

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings named by ``MEMDIR_*`` variables (names in any case), defaults elsewhere.

        Raises:
            SettingsError: A variable's value does not fit its setting; the message
                names the variable, the value and what it must be.
        """
        found = given(environ)
        values = {name: found[ENV_PREFIX + name.upper()] for name in cls.model_fields
                  if ENV_PREFIX + name.upper() in found}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            problems, variables = [], []
            for error in exc.errors():
                name = str(error["loc"][0]) if error["loc"] else ""
                variable = ENV_PREFIX + name.upper()
                variables.append(variable)
                problems.append(f"{variable}={found.get(variable, '')!r}: {error['msg']}")
            raise SettingsError("; ".join(problems), variables) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The settings of this process (read from the environment once).

    Raises:
        SettingsError: A ``MEMDIR_*`` variable holds a value its setting cannot take.
    """
    return Settings.from_environment()


def load_yaml_model(path: str | Path, model: type[M], what: str,
                    error: type[ValueError] = ValueError) -> M:
    """Read a YAML file of settings into ``model``.

    Args:
        path: The file.
        model: The pydantic model the settings must fit.
        what: What the file is, for messages (e.g. ``study config``).
        error: The exception to raise (a ``ValueError`` subclass).

    Raises:
        ValueError: (``error``) The file cannot be read, is not YAML, is not a
            mapping, or does not fit ``model``; the message names the file and
            every problem.
    """
    import yaml  # here, not at the top: every command reads the settings, few read YAML

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise error(f"{path}: the {what} must be a mapping of settings")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or what}: {e['msg']}"
                             for e in exc.errors())
        raise error(f"{path}: not a valid {what}: {problems}") from None
