"""Prices as data: a table per model, applied to usage after the fact.

The defaults ship as ``data/prices.yaml``; a user file of the same shape is
merged over them key by key. A price that is not known stays unknown (None)
and so does every cost computed from it.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memdir.agents._usage import Usage

__all__ = ["ModelPrice", "PriceTable"]

_MILLION = 1_000_000


class ModelPrice(BaseModel):
    """US dollars per million tokens of one model; None where unknown."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float | None = Field(default=None, ge=0)
    cached_input: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)
    output: float | None = Field(default=None, ge=0)
    source: str = ""

    def cost(self, usage: Usage) -> float | None:
        """Dollars for ``usage``, or None when a needed price is unknown."""
        write_rate = self.cache_write if self.cache_write is not None else self.input
        parts = [
            (usage.uncached_input, self.input),
            (usage.cached_input, self.cached_input),
            (usage.cache_write, write_rate),
            (usage.output, self.output),
        ]
        total = 0.0
        for tokens, rate in parts:
            if tokens == 0:
                continue
            if rate is None:
                return None
            total += tokens * rate / _MILLION
        return total


class PriceTable:
    """Prices keyed by model name.

    Args:
        prices: Model name to price.
    """

    def __init__(self, prices: dict[str, ModelPrice]) -> None:
        self.prices = dict(prices)

    @classmethod
    def load(cls, user_file: str | Path | None = None) -> PriceTable:
        """The shipped table, with ``user_file``'s entries (if given) merged over it.

        Raises:
            ValueError: A file is not a mapping of model names to prices.
        """
        prices = dict(_shipped())
        if user_file is not None:
            path = Path(user_file).expanduser()
            try:
                user_text = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise ValueError(f"cannot read the price file {path}: {exc.strerror}") from None
            prices.update(_parse(user_text, str(path)))
        return cls(prices)

    def price(self, model: str) -> ModelPrice | None:
        """The price of ``model``: by its full name, else by its last path part."""
        if model in self.prices:
            return self.prices[model]
        short = model.rsplit("/", 1)[-1]
        for name, price in self.prices.items():
            if name.rsplit("/", 1)[-1] == short:
                return price
        return None

    def cost(self, model: str, usage: Usage) -> float | None:
        """Dollars for ``usage`` on ``model``; None if the model, a rate or the usage is unknown.

        Usage is unknown when some call reported none: that cost is not zero.
        """
        if not usage.known:
            return None
        if usage.total == 0:
            return 0.0
        price = self.price(model)
        return None if price is None else price.cost(usage)


@cache
def _shipped() -> dict[str, ModelPrice]:
    text = resources.files("memdir.agents").joinpath("data/prices.yaml").read_text("utf-8")
    return _parse(text, "the shipped price table")


def _parse(text: str, where: str) -> dict[str, ModelPrice]:
    try:
        data: Any = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"{where} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where} must map model names to prices (input, cached_input, output)")
    table: dict[str, ModelPrice] = {}
    for name, entry in data.items():
        try:
            table[str(name)] = ModelPrice.model_validate(entry or {})
        except ValidationError as exc:
            raise ValueError(
                f"{where}: the price of {name} is invalid: {exc.errors()[0]['msg']} "
                "(fields: input, cached_input, cache_write, output in $ per million tokens)"
            ) from None
    return table
