"""The health report: both panels, a plain-language reading, and the alarms raised.

Panel values are descriptors, not scores, so they never raise an alarm by
themselves. Alarms are raised by defects a maintainer can act on: dangling
references, near-duplicate content across files, descriptions that no longer
match their files, subjects given conflicting undated values, and source
locators lost since a reference state.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from memdir.metrics._alarms import (
    DescriptionMismatch,
    DuplicatePair,
    LostFacts,
    StaleFact,
    find_duplicates,
    find_stale_descriptions,
    find_stale_facts,
    lost_facts,
)
from memdir.metrics._measure import Measurer, StoreMetrics, measure_store, read_state
from memdir.metrics._shape import SHAPE_COLUMNS
from memdir.metrics._tree import collector_paused
from memdir.store import Store, conflict_alarms, has_conflict

__all__ = ["HealthReport", "HealthThresholds", "collector_paused", "health_report"]


@dataclass(frozen=True, slots=True)
class HealthThresholds:
    """Where the alarms trip.

    Attributes:
        duplicate_cosine: Units in different files at or above this cosine are near-duplicates.
        description_cosine: A description below this cosine with its body is stale.
        max_lost_share: Losing a larger share of the reference locators raises an alarm.
    """

    duplicate_cosine: float = 0.9
    description_cosine: float = 0.02
    max_lost_share: float = 0.0


@dataclass(slots=True)
class HealthReport:
    """Everything ``memdir health`` prints."""

    metrics: StoreMetrics
    duplicates: list[DuplicatePair]
    stale_descriptions: list[DescriptionMismatch]
    stale_facts: list[StaleFact]
    lost: LostFacts | None
    thresholds: HealthThresholds
    reading: list[str] = field(default_factory=list)
    alarms: list[str] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)
    """Files left out of every measure because they cannot be read, with the reason."""
    conflicts: list[str] = field(default_factory=list)
    """One alarm per file holding an unresolved sync conflict."""

    @property
    def healthy(self) -> bool:
        """True when no alarm was raised."""
        return not self.alarms

    def alarm_counts(self) -> dict[str, int]:
        """How many alarms of each kind were raised (kinds with none left out)."""
        lost = self.lost
        counts = {
            "sync conflict": len(self.conflicts),
            "unreadable file": len(self.unreadable),
            "dangling reference": len(self.metrics.shape.dangling),
            "near-duplicate": len(self.duplicates),
            "stale description": len(self.stale_descriptions),
            "conflicting values": len(self.stale_facts),
            "lost locators": int(lost is not None and lost.reference > 0
                                 and lost.share > self.thresholds.max_lost_share),
        }
        return {kind: n for kind, n in counts.items() if n}

    def to_dict(self) -> dict[str, object]:
        """The report as a plain mapping for JSON."""
        lost = None
        if self.lost is not None:
            lost = {"reference": self.lost.reference, "missing": self.lost.missing,
                    "share": self.lost.share}
        return {
            "healthy": self.healthy,
            "alarm_counts": self.alarm_counts(),
            "alarms": self.alarms,
            "reading": self.reading,
            **self.metrics.to_dict(),
            "duplicates": [asdict(d) for d in self.duplicates],
            "stale_descriptions": [asdict(d) for d in self.stale_descriptions],
            "stale_facts": [asdict(s) for s in self.stale_facts],
            "lost_facts": lost,
            "unreadable": self.unreadable,
            "sync_conflicts": self.conflicts,
            "thresholds": asdict(self.thresholds),
        }


def _fmt(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _reading(m: StoreMetrics) -> list[str]:
    s, t = m.shape, m.taxonomy
    if s.files == 0:
        return ["The store is empty."]
    lines = [
        f"{s.files} files in {s.folders} folders with {s.sections} headings, "
        f"{s.bytes / 1024:.1f} KB in {s.units} content units.",
        f"Leaves sit {_fmt(s.mean_leaf_depth, 1)} levels below the root on average "
        f"(deepest {s.max_depth}); a node with children has {_fmt(s.mean_fanout, 1)} of them.",
    ]
    lines.extend(c.reading.format(value=_fmt(c.value(s), 1)) for c in SHAPE_COLUMNS if c.reading)
    if s.size_gini is not None:
        spread = "evenly" if s.size_gini < 0.3 else "unevenly" if s.size_gini < 0.6 else \
            "very unevenly"
        lines.append(f"Content is spread {spread} over units (Gini {s.size_gini:.2f}).")
    if t.b1_worst_pair is not None:
        lines.append(
            f"Sibling labels differ by {_fmt(t.b1_distinguishability)} on average (B1, 0-1); "
            f"the most alike pair is {t.b1_worst_pair.a} and {t.b1_worst_pair.b} "
            f"({_fmt(t.b1_min)})."
        )
    if t.b2_cohesion is not None:
        lines.append(
            f"Units under one parent share {t.b2_cohesion:.1f}x the vocabulary of units "
            "under different parents (B2; above 1 means siblings belong together)."
        )
    if t.b3_leakage is not None:
        sampled = ""
        if t.b3_units < t.units_considered and t.b3_interval is not None:
            low, high = t.b3_interval
            sampled = (f"; a seeded sample of {t.b3_units:,} of {t.units_considered:,} units, "
                       f"95% interval {low:.1%} to {high:.1%}")
        lines.append(
            f"{t.b3_leakage:.1%} of units read closer to another sibling group than to "
            f"their own (B3 scope leakage{sampled})."
        )
    if t.b4_spearman is not None:
        trend = "tracks" if t.b4_spearman > 0.05 else "barely tracks" if t.b4_spearman > -0.05 \
            else "runs against"
        lines.append(
            f"Distance in the tree {trend} difference in content (B4 Spearman "
            f"{t.b4_spearman:.2f} over {t.b4_pairs} pairs)."
        )
    return lines


def _alarms(report: HealthReport) -> list[str]:
    alarms = list(report.conflicts)
    for reason in report.unreadable.values():
        alarms.append(f"{reason.rstrip('.')}; it is left out of every measure")
    for d in report.metrics.shape.dangling:
        alarms.append(f"dangling reference in {d.path}:{d.line}: {d.reason}")
    for p in report.duplicates:
        alarms.append(f"near-duplicate content ({p.cosine:.2f}): {p.a} and {p.b}")
    for m in report.stale_descriptions:
        alarms.append(
            f"description of {m.path} no longer matches its content ({m.cosine:.2f}): "
            f"{m.description!r}"
        )
    for f in report.stale_facts:
        where = ", ".join(str(n) for n in f.lines)
        alarms.append(
            f"{f.path} (lines {where}) gives {f.subject!r} different values with no date or "
            "past marker; mark the older one as past"
        )
    lost = report.lost
    if lost is not None and lost.reference and lost.share > report.thresholds.max_lost_share:
        shown = ", ".join(lost.missing[:12]) + (" ..." if len(lost.missing) > 12 else "")
        alarms.append(
            f"{len(lost.missing)} of {lost.reference} source locators ({lost.share:.1%}) are "
            f"gone from the store: {shown}"
        )
    return alarms


def health_report(
    store: Store,
    *,
    reference: Iterable[str] | None = None,
    thresholds: HealthThresholds | None = None,
    measurer: Measurer | None = None,
) -> HealthReport:
    """Measure a store and raise the alarms.

    Args:
        store: The live store.
        reference: Source locators the store should still carry (from a source
            conversation or an earlier snapshot); None skips the lost-facts check.
        thresholds: Where alarms trip.
        measurer: Settings (seed, heading depth) and caches (by default a measurer that
            keeps no label counts past B1: one state is measured).

    The cycle collector is paused while it runs (:func:`collector_paused`).
    """
    with collector_paused():
        return _health_report(store, reference, thresholds, measurer)


def _health_report(store: Store, reference: Iterable[str] | None,
                   thresholds: HealthThresholds | None, measurer: Measurer | None
                   ) -> HealthReport:
    limits = thresholds or HealthThresholds()
    measurer = measurer or Measurer(keep_labels=False)
    unreadable: dict[str, str] = {}
    metrics = measure_store(store, measurer=measurer, unreadable=unreadable)
    tree = metrics.tree
    lost = None
    if reference is not None:
        lost = lost_facts(reference, read_state(store, {}).values())
    report = HealthReport(
        metrics=metrics,
        duplicates=find_duplicates(tree, limits.duplicate_cosine, min_chars=measurer.min_chars,
                                   cache=measurer.units_cache),
        stale_descriptions=find_stale_descriptions(tree, limits.description_cosine,
                                                   min_chars=measurer.min_chars,
                                                   cache=measurer.units_cache),
        stale_facts=find_stale_facts(tree),
        lost=lost,
        thresholds=limits,
        unreadable=unreadable,
    )
    report.reading = _reading(metrics)
    # Only the bodies holding a conflict are passed on: a body is joined from its pieces
    # when asked for, and a mapping of every body would hold all the text twice.
    conflicted = {p: body for p, s in tree.files.items() if has_conflict(body := s.body)}
    report.conflicts = conflict_alarms(conflicted,
                                       {p: tree.files[p].body_line for p in conflicted})
    report.alarms = _alarms(report)
    return report
