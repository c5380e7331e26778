"""The stores of a run as the paper tabulates them: build effort, shape, builder ladder.

Table 3 is what each store cost to build (model calls, tool calls, rounds per
chunk or pass, tokens, dollars, compute bounds) beside its profile (folders,
files, sections, kilobytes, cross-references); Table 4 is the two metric panels,
Panel A (shape) and Panel B (taxonomy adherence), one row per store; Table 6 is
the builder ladder, one row per builder model of a store form read by one search
model, with the store's shape, the build's effort and the answers' score. Every
figure comes from the run's store records (:class:`memdir.study.StoreInfo`); a
figure a record does not hold is a missing value.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from memdir.agents import ComputeBounds, cell_bounds
from memdir.builders import BuildRecord
from memdir.metrics import measure_store
from memdir.runs import Table, Value
from memdir.store import Store, StoreError
from memdir.study._load import RunRecords
from memdir.study._records import CellStatus, StoreInfo
from memdir.study._scores import percent, primary_score

__all__ = ["build_effort", "store_harnesses", "store_of", "table_builder_ladder",
           "table_shape", "table_stores"]

_KIB = 1024
"""Bytes in the tables' KB, as ``memdir health`` counts them."""
_PANEL_B = ("b1_distinguishability", "b1_min", "b2_cohesion", "b3_leakage", "b4_spearman",
            "units_considered")


def store_of(run: RunRecords, status: CellStatus) -> StoreInfo | None:
    """The record of the store a cell read (None: closed-book, or not recorded)."""
    return run.stores.get(status.store or status.cell.store_key)


def store_harnesses(run: RunRecords) -> dict[str, str]:
    """Each store's harness(es), from the cells that read it (comma-joined, in run order)."""
    found: dict[str, list[str]] = defaultdict(list)
    for status in run.statuses:
        key = status.store or status.cell.store_key
        if status.cell.harness not in found[key]:
            found[key].append(status.cell.harness)
    return {key: ", ".join(names) for key, names in found.items()}


def _kb(profile: dict[str, Any]) -> float | None:
    size = profile.get("bytes")
    return None if size is None else size / _KIB


def build_effort(build: BuildRecord | None) -> dict[str, Value]:
    """A build's units (chunks, passes or one episode) and its effort, total and per unit."""
    if build is None:
        return {}
    units = len(build.units)
    kinds = sorted({u.kind for u in build.units})
    per = (lambda total: total / units) if units else (lambda total: None)
    return {"units": units or None, "unit kind": ", ".join(kinds) or None,
            "rounds": build.model_calls, "rounds/unit": per(build.model_calls),
            "tool calls": build.tool_calls, "tool calls/unit": per(build.tool_calls),
            "tool errors": build.tool_errors, "budget exhausted": build.budget_exhausted}


def _build_bounds(build: BuildRecord) -> ComputeBounds | None:
    """Compute bounds over a model-built store's kept model calls; None if it kept none."""
    episodes = [u.episode for u in build.units if u.episode is not None]
    return cell_bounds(episodes) if episodes else None


_EFFORT = ["units", "unit kind", "rounds", "rounds/unit", "tool calls", "tool calls/unit",
           "tool errors"]


def table_stores(run: RunRecords) -> Table:
    """Table 3: what each store cost to build and what it looks like."""
    table = Table("table3", "Table 3 — build cost and store profile",
                  ["store", "variant", "builder", "harness", "files", "bytes", "KB", "folders",
                   "sections", "xrefs", "mean leaf depth", "max depth",
                   *(f"build {c}" for c in _EFFORT), "build in tok", "build cached tok",
                   "build out tok", "build $", "build s", "build ceiling",
                   "build floor", "build realized %"], digits=2,
                  notes=["profile from memdir.metrics.measure_store (KB = 1,024 bytes, as "
                         "memdir health counts them; xrefs: in-store cross-references); "
                         "build figures from the builder's "
                         "BuildRecord",
                         "units: the build's chunks (curated), passes (reorganized) or its one "
                         "episode (foldered); build rounds are its model calls; — for a "
                         "zero-cost store",
                         "model-built stores: tokens and dollars of the whole build, also when "
                         "this run reused it from the build cache; in tok counts cached input "
                         "too",
                         "build ceiling/floor: compute bounds in tokens over the build's model "
                         "calls (memdir.agents.cell_bounds); — where none were kept"])
    harnesses = store_harnesses(run)
    for info in run.stores.values():
        build, p = info.build, info.profile
        effort = build_effort(build)
        bounds = _build_bounds(build) if build is not None else None
        cost = (info.build_cost if info.build_cost is not None else build.cost
                ) if build is not None else None
        table.rows.append([
            info.key, info.variant, build.builder_model if build is not None else None,
            harnesses.get(info.key), len(build.files) if build is not None else 0,
            build.bytes if build is not None else None,
            build.bytes / _KIB if build is not None else _kb(p), p.get("folders"),
            p.get("sections"), p.get("xrefs"), p.get("mean_leaf_depth"), p.get("max_depth"),
            *(effort.get(c) for c in _EFFORT),
            *((build.input_tokens, build.usage.cached_input, build.output_tokens, cost,
               build.wall_seconds) if build is not None else (None,) * 5),
            *((bounds.ceiling, bounds.floor,
               None if bounds.realized is None else 100 * bounds.realized)
              if bounds is not None else (None, None, None))])
    return table


def _panel_b(info: StoreInfo, seed: int) -> tuple[dict[str, Any], bool]:
    """Panel B of a store: from its record, else measured from its folder if still there.

    Returns the figures and whether they were measured now (a run written before
    the store records kept Panel B).
    """
    if "b1_distinguishability" in info.profile:
        return info.profile, False
    if info.path is None or not Path(info.path).is_dir():
        return {}, False
    try:
        metrics = measure_store(Store(info.path), seed=seed)
    except StoreError:
        return {}, False
    return metrics.taxonomy.to_dict(), True


def table_shape(run: RunRecords) -> Table:
    """Table 4: Panel A (shape) and Panel B (taxonomy adherence) of every store read."""
    table = Table("table4", "Table 4 — store shape (Panel A) and taxonomy adherence (Panel B)",
                  ["store", "variant", "builder", "folders", "files", "sections", "KB",
                   "units", "leaves", "mean leaf depth", "max depth", "mean fanout",
                   "size gini", "xrefs", "dangling", "B1 distinguishability", "B1 min",
                   "B2 cohesion", "B3 leakage", "B4 spearman", "B units"], digits=3,
                  empty="(no store: every cell was closed-book)",
                  notes=["one row per store the run built or read; definitions in "
                         "docs/metrics.md (headings add depth; units under 40 characters are "
                         "left out of B2-B4)",
                         "B1-B4 are descriptors of the taxonomy contract, not quality scores; "
                         "— where a store is too small for a measure"])
    seed = run.manifest.seed if run.manifest is not None else 0
    measured_now = []
    for info in run.stores.values():
        p = info.profile
        if not p:
            continue
        b, now = _panel_b(info, seed)
        if now:
            measured_now.append(info.key)
        table.rows.append([
            info.key, info.variant, info.build.builder_model if info.build else None,
            p.get("folders"), p.get("files"), p.get("sections"), _kb(p), p.get("units"),
            p.get("leaves"), p.get("mean_leaf_depth"), p.get("max_depth"),
            p.get("mean_fanout"), p.get("size_gini"), p.get("xrefs"), p.get("dangling_count"),
            *(b.get(k) for k in _PANEL_B)])
    if measured_now:
        table.notes.append("Panel B measured from the store folder when this report was "
                           "written (the run's records predate it): " + ", ".join(measured_now))
    return table


def table_builder_ladder(run: RunRecords) -> Table:
    """Table 6: each builder model's store of one form, read by one search model.

    Rows group by benchmark, conversation, variant, harness and search model, and
    appear only where two or more builder models built that store form.
    """
    table = Table("table6", "Table 6 — builder ladder: store shape, build effort, answers",
                  ["benchmark", "conversation", "variant", "harness", "searcher", "builder",
                   "files", "folders", "sections", "xrefs", "max depth", "build rounds/unit",
                   "build tool calls", "build $", "n", "score", "judge %", "cents/query"],
                  digits=2, empty="(no store form was built by two or more builder models)",
                  notes=["score: token F1 or option match x 100, the correctness table's "
                         "rule; judge % over the judged questions; cents/query: the search "
                         "agent's",
                         "build $: the whole build by the price table; — where a price is "
                         "unknown"])
    groups: dict[tuple[str, ...], list[CellStatus]] = defaultdict(list)
    for status in run.complete:
        c = status.cell
        if c.builder_model is not None:
            groups[(c.dataset_key, c.conversation, c.variant, c.harness,
                    c.search_model)].append(status)
    for key, statuses in groups.items():
        if len({s.cell.builder_model for s in statuses}) < 2:
            continue
        for status in sorted(statuses, key=lambda s: s.cell.builder_model or ""):
            info = store_of(run, status)
            p = info.profile if info is not None else {}
            build = info.build if info is not None else None
            effort = build_effort(build)
            records = run.records[status.cell.key]
            costs = [r.cost(run.prices) for r in records]
            table.rows.append([
                *key, status.cell.builder_model, p.get("files"), p.get("folders"),
                p.get("sections"), p.get("xrefs"), p.get("max_depth"),
                effort.get("rounds/unit"), effort.get("tool calls"),
                info.build_cost if info is not None else None, len(records),
                percent(primary_score(r) for r in records),
                percent(primary_score(r, True) for r in records),
                None if not costs or any(c is None for c in costs)
                else 100 * sum(c or 0.0 for c in costs) / len(costs)])
    return table
