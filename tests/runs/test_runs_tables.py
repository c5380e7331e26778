"""One table renderer: a missing value is spelled one way in every report."""

from __future__ import annotations

from memdir.runs import MISSING, Table


def test_markdown_and_csv_spell_a_missing_value_one_way_each() -> None:
    table = Table("t", "A table", ["name", "score", "note"],
                  [["a", 0.12345, None], ["b|c", None, "two\nlines"]], digits=2)
    grid = table.grid().splitlines()
    assert grid[2] == f"| a | 0.12 | {MISSING} |"
    assert grid[3] == f"| b\\|c | {MISSING} | two lines |"  # a pipe never splits a row
    assert table.csv().splitlines()[1:] == ["a,0.12345,", 'b|c,,"two', 'lines"']
    assert table.markdown().startswith("### A table\n\n| name |")


def test_an_empty_table_says_so() -> None:
    assert "(nothing)" in Table("t", "T", ["x"], empty="(nothing)").markdown()
