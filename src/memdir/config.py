"""memdir's settings: one object, read from ``MEMDIR_*`` environment variables.

Nothing else in memdir reads the environment; code that needs a setting takes
it as an argument, and the command line fills those from :func:`get_settings`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from memdir.store import DEFAULT_MAX_FILE_BYTES

__all__ = ["Settings", "get_settings"]


class Settings(BaseSettings):
    """Settings shared by the library's entry points and the command line."""

    model_config = SettingsConfigDict(env_prefix="MEMDIR_", extra="ignore")

    model: str | None = Field(
        default=None,
        description="Default model as provider/model (e.g. openai/gpt-5.4-mini); "
        "None means the offline policy.",
    )
    max_file_bytes: int = Field(default=DEFAULT_MAX_FILE_BYTES, gt=0,
                                description="Largest file a write may produce.")
    shell_timeout: float = Field(default=10.0, gt=0,
                                 description="Seconds a shell tool call may run.")
    shell_output_chars: int = Field(default=20_000, gt=0,
                                    description="Characters of shell output shown to a model.")
    mcp_token: SecretStr | None = Field(
        default=None, description="Bearer token the MCP server requires over http."
    )
    data_dir: Path | None = Field(default=None,
                                  description="Where benchmark files live (LoCoMo, ...).")
    cache_dir: Path = Field(default=Path("~/.cache/memdir"),
                            description="Cache for built stores and tokenizer files.")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The settings of this process (read once)."""
    return Settings()
