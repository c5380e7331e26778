"""The hand-curated notes of the sample store, as a management agent would keep them.

Each fact carries the locator of the turn it came from (``[S2T5]``: session 2,
turn 5); relative dates and pronouns are resolved to literal terms; a fact
that stopped being true is kept under a ``Past`` heading with the date it
changed. The builder checks every locator against the conversation.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NOTES", "Note"]


@dataclass(frozen=True, slots=True)
class Note:
    """One file of the sample store: its path, description and markdown body."""

    path: str
    description: str
    body: str


MAYA = """\
# Maya

Friend of Theo; a nurse. Sister of Ada.

## Home

- Lives in Bristol since 2025-06-01, in a flat in Bedminster near the river [S2T5] [S3T1].

### Past

- Until 2025-05-31: lived in Leeds [S1T2]. Moved to Bristol for a new job [S2T5].

## Work

- Clinical educator at Severn Vale Hospital, Bristol, since 2025-06-02: runs the
  induction course for newly qualified nurses; day shifts only [S2T3] [S3T1] [S3T3].

### Past

- Until 2025-05: nurse on the cardiology ward at St Aldhelm's, Leeds, working
  twelve-hour night shifts in March 2025 [S1T2]. Accepted the Bristol offer in April 2025 [S2T1].

## Running

- Ran the Leeds half marathon on 2025-05-18 in 2:04:37, beating her goal of under
  2:10 [S1T4] [S3T5]. Details: see /memories/events/2025/leeds-half-marathon.md

## Family

- Sister Ada married Jonah on 2025-08-16 in Whitby; Maya was maid of honour [S1T12] [S4T2].
  See /memories/events/2025/ada-wedding.md

## Pets

- Biscuit: a two-year-old ginger rescue cat, adopted by 2025-09-21; sleeps on her laptop [S4T6].
"""

THEO = """\
# Theo

Friend of Maya. Lives in Manchester [S2T14].

## Work

- Developer on the newspaper digitisation project at the Manchester Central Library
  archive since 2025-05-26 [S3T8] [S3T10]. Contract extended to the end of 2026 [S4T11].

### Past

- Until 2025-04-08: backend developer at Spokes, a bike-sharing startup; launched
  docking stations in Salford in February 2025 [S1T7]. Laid off with a third of the
  team on 2025-04-08 when the investors pulled out [S2T8].

## Pottery

- Takes a pottery class on Thursday evenings since April 2025 [S2T10] [S3T12].
- Sold his first bowls, eight of them, at the Levenshulme makers market on the
  weekend of 2025-09-13 [S4T9].

## Pets

- Pepper: a beagle, four years old in March 2025, who steals socks and gloves [S1T8] [S1T9].

## Plans

- Visiting Maya in Bristol on 2025-10-17 to 2025-10-19 [S4T13].
  See /memories/plans/theo-visits-bristol.md
"""

WEDDING = """\
# Ada's wedding

- Ada (Maya's sister) got engaged by 2025-03-02; wedding set for 2025-08-16 in Whitby [S1T10].
- Maya was maid of honour and organised the hen weekend [S1T12]: a cottage in the
  Yorkshire Dales in July 2025 [S3T13].

## The day

- Ada married Jonah on 2025-08-16 at the abbey in Whitby; it stayed dry [S4T2].
- Maya cried during her speech; the evening ended with fish and chips on the pier [S4T4].

See /memories/people/maya.md > ## Family
"""

HALF = """\
# Leeds half marathon 2025

- Race day: 2025-05-18. Maya trained with three runs a week; goal under 2:10 [S1T4].
- Longest training run: 16 km on 2025-04-12 [S2T13].
- Result: 2:04:37 [S3T5].
"""

VISIT = """\
# Theo visits Bristol

- Planned for Friday 2025-10-17 to Sunday 2025-10-19; Theo comes down by train on the
  Friday [S4T13].
- Plans: the harbour and a new bakery on Maya's street; Theo brings a bowl [S4T14].
"""

NOTES: tuple[Note, ...] = (
    Note("/memories/people/maya.md",
         "Maya, nurse educator in Bristol (moved from Leeds June 2025); work, running, family, cat",
         MAYA),
    Note("/memories/people/theo.md",
         "Theo, Manchester developer (library archive since May 2025, ex-Spokes); pottery, dog",
         THEO),
    Note("/memories/events/2025/ada-wedding.md",
         "Ada and Jonah's wedding, Whitby, 2025-08-16, with the hen weekend",
         WEDDING),
    Note("/memories/events/2025/leeds-half-marathon.md",
         "Maya's Leeds half marathon, 2025-05-18, training and result",
         HALF),
    Note("/memories/plans/theo-visits-bristol.md",
         "Theo's planned visit to Maya in Bristol, 17-19 October 2025",
         VISIT),
)
