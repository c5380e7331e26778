"""Print each prompt's checklist status: the paper's points, and how many our prompt carries.

    uv run --no-sync python scripts/prompt_checklists.py

One row per prompt and harness it is sent under; exits 1 when any point has no
carrying line (the same check tests/agents/test_prompt_checklists.py makes).
"""

from __future__ import annotations

import sys

from memdir.agents._checklists import check_checklists, load_checklists
from memdir.tools import harness_prompt


def main() -> int:
    """Print the table; 1 when a point is missing, else 0."""
    gaps = check_checklists()
    missing: dict[str, int] = {}
    for gap in gaps:
        missing[gap.prompt] = missing.get(gap.prompt, 0) + 1
    print("| checklist | prompt as sent | points | carried | missing |")
    print("| --- | --- | ---: | ---: | ---: |")
    total = 0
    for checklist in load_checklists():
        for prompt, harnesses in checklist.prompts.items():
            points = sum(1 for p in checklist.points if p.applies_to(prompt))
            for harness in harnesses:
                name = harness_prompt(prompt, harness)
                gone = missing.get(name, 0)
                total += points
                print(f"| {checklist.family} | {name} | {points} | {points - gone} | {gone} |")
    print(f"\n{total} point checks, {len(gaps)} missing")
    for gap in gaps:
        print(f"- {gap.prompt}: {gap.section}: {gap.point}")
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main())
