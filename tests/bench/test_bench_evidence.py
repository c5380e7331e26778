"""Evidence normalisation: every form seen in the data, and no crash on anything else."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memdir.bench.datasets._evidence import resolve_evidence

TABLE = {f"D{s}:{t}": f"S{s}T{t}" for s in range(1, 31) for t in range(1, 40)}


def _one(raw: str) -> tuple[list[str], str | None]:
    locators, notes = resolve_evidence("q", [raw], TABLE)
    return locators, notes[0].action if notes else None


def test_clean_ids_need_no_note() -> None:
    assert _one("D3:7") == (["S3T7"], None)


def test_forms_found_in_the_data() -> None:
    assert _one("D8:6; D9:17") == (["S8T6", "S9T17"], "normalised")
    assert _one("D9:1 D4:4 D4:6") == (["S9T1", "S4T4", "S4T6"], "normalised")
    assert _one("D:11:26") == (["S11T26"], "normalised")
    assert _one("D30:05") == (["S30T5"], "normalised")
    assert _one("D5:3.") == (["S5T3"], "normalised")
    assert _one("D17;39") == (["S17T39"], "normalised")
    assert _one("D 2:18") == (["S2T18"], "normalised")
    assert _one("23:29") == (["S23T29"], "normalised")
    assert _one("D13:4. D14:4") == (["S13T4", "S14T4"], "normalised")
    assert _one("D13:25:D20:19") == (["S13T25", "S20T19"], "normalised")
    assert _one("D12:3-D12:5") == (["S12T3", "S12T4", "S12T5"], "normalised")
    assert _one("D12:11-D12:13;D13:2-D13:3")[0] == ["S12T11", "S12T12", "S12T13", "S13T2", "S13T3"]


def test_what_cannot_be_read_is_kept_as_a_note() -> None:
    assert _one("") == ([], "dropped")
    assert _one("D") == ([], "unresolved")
    assert _one("D58") == ([], "unresolved")
    assert _one("D99:1") == ([], "unresolved")
    assert _one("D2:3-D4:1") == ([], "unresolved")
    locators, notes = resolve_evidence("q", ["D1:1; D99:1"], TABLE)
    assert locators == ["S1T1"]
    assert notes[0].action == "unresolved" and "D99:1" in notes[0].detail


def test_duplicates_collapse_in_citation_order() -> None:
    locators, _ = resolve_evidence("q", ["D2:2", "D1:1", "D2:2"], TABLE)
    assert locators == ["S2T2", "S1T1"]


@given(st.lists(st.text(max_size=30), max_size=5))
def test_never_crashes_and_only_returns_known_locators(raw: list[str]) -> None:
    locators, notes = resolve_evidence("q", raw, TABLE)
    assert set(locators) <= set(TABLE.values())
    assert len(notes) <= len(raw)


@given(st.integers(1, 30), st.integers(1, 39))
def test_clean_ids_round_trip(session: int, turn: int) -> None:
    assert resolve_evidence("q", [f"D{session}:{turn}"], TABLE) == ([f"S{session}T{turn}"], [])
