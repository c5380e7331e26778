"""Build records: version 1 (zero-cost) records still load; version 2 sums its units."""

from __future__ import annotations

import pytest

from memdir.agents import Usage
from memdir.builders import BUILD_RECORD_VERSION, BuildRecord, UnitRecord
from memdir.builders._record import unit_totals

V1 = {"version": 1, "variant": "chunk-retrieval", "conversation_id": "conv-50",
      "benchmark": "locomo", "files": ["/memories/chunks/chunk-0001.md"], "bytes": 812,
      "model_calls": 0, "input_tokens": 0, "output_tokens": 0, "wall_seconds": 0.01,
      "chunk_tokens": 4000}


def test_a_version_1_record_still_loads() -> None:
    record = BuildRecord.model_validate(V1)
    assert record.version == 1 and record.units == [] and record.cost == 0.0
    assert BUILD_RECORD_VERSION == 2
    assert record.variant == "chunk"  # the old spelling of the chunk store reads as the new


def test_a_record_of_no_variant_is_refused_naming_the_new_name() -> None:
    with pytest.raises(ValueError, match="old name; the variant is now 'curated'"):
        BuildRecord.model_validate({**V1, "variant": "hierarchical"})
    with pytest.raises(ValueError, match="choose one of closed-book, chunk, verbatim"):
        BuildRecord.model_validate({**V1, "variant": "weird"})


def test_totals_sum_the_units_and_an_unknown_price_makes_the_cost_unknown() -> None:
    units = [
        UnitRecord(kind="chunk", index=1, label="a", rounds=3, tool_calls=4, tool_errors=1,
                   usage=Usage(uncached_input=100, cached_input=50, output=10), cost=0.5,
                   wall_seconds=1.5),
        UnitRecord(kind="chunk", index=2, label="b", rounds=2, budget_exhausted=True,
                   usage=Usage(uncached_input=10, output=5), cost=0.25, wall_seconds=0.5),
    ]
    totals = unit_totals(units)
    assert totals["model_calls"] == 5 and totals["tool_calls"] == 4
    assert totals["input_tokens"] == 160 and totals["output_tokens"] == 15
    assert totals["cost"] == 0.75 and totals["budget_exhausted"] == 1
    assert totals["wall_seconds"] == 2.0 and totals["tool_errors"] == 1
    unknown = [units[0], units[1].model_copy(update={"cost": None})]
    assert unit_totals(unknown)["cost"] is None
