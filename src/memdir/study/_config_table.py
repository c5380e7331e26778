"""Table 11: the configuration of record, rendered from the run's manifest.

One row per setting: each role's models, effort, output cap and round budget as
configured, and as its episode records show them run (defaults resolved); the
judge; the harnesses; the chunking rule; then every pin the manifest holds
(prompt hashes, tool-set digests, data-file hashes, versions, the judge with
its template hashes). Settings the
table does not know by name are listed too, as written, so nothing the run
pinned is left out.
"""

from __future__ import annotations

import json
from typing import Any

from memdir.agents import EpisodeRecord
from memdir.bench import benchmark_entry
from memdir.runs import Table, Value
from memdir.study._load import RunRecords

__all__ = ["table_configuration"]

_ROLES = (("search", "search agent"), ("management", "management agent (builders)"),
          ("judge", "judge"))
_ROLE_FIELDS = (("models", "models"), ("model", "model"), ("effort", "effort"),
                ("max_tokens", "output cap (tokens)"), ("max_rounds", "round budget"),
                ("attribution", "attribution graded"), ("limit", "questions judged per cell"))
_NAMED = ("name", "seed", "benchmarks", "variants", "harnesses", "chunk_tokens",
          "reorganize_passes", *(r for r, _ in _ROLES))
_PINS = (("prompt_hashes", "prompt"), ("toolset_digests", "tool set"),
         ("datasets", "data file"), ("versions", "version"))


def _text(value: Any) -> str:
    if value is None:
        return "default"
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _benchmarks(specs: list[dict[str, Any]]) -> list[list[Value]]:
    rows: list[list[Value]] = []
    for spec in specs:
        parts = [f"conversations {_text(spec.get('conversations'))}"]
        if spec.get("tiers") and benchmark_entry(str(spec.get("name"))).tiers:
            parts.append(f"tiers {_text(spec['tiers'])}")
        parts.append("every question" if spec.get("limit") is None
                     else f"first {spec['limit']} questions")
        rows.append(["benchmark", str(spec.get("name")), "; ".join(parts)])
    return rows


def _roles(config: dict[str, Any]) -> list[list[Value]]:
    rows: list[list[Value]] = []
    for key, title in _ROLES:
        role = config.get(key)
        if role is None:
            rows.append([title, "-", "none"])
            continue
        if key == "judge" and role.get("model") is None:
            rows.append([title, "model", "none: token F1 / option match only"])
            continue
        for field, label in _ROLE_FIELDS:
            if field in role:
                rows.append([title, label, _text(role[field])])
    return rows


def _as_run(run: RunRecords) -> list[list[Value]]:
    """Each role's settings as its episodes record them (defaults resolved), per model."""
    episodes: list[EpisodeRecord] = [r.episode for rs in run.records.values() for r in rs]
    episodes += [u.episode for info in run.stores.values() if info.build is not None
                 for u in info.build.units if u.episode is not None]
    seen: dict[tuple[str, str], None] = {}
    for e in episodes:
        settings = (f"{e.model}: round budget {e.max_rounds}, output cap "
                    f"{e.max_tokens or 'none'}, effort {e.reasoning_effort or 'none'}, "
                    f"prompt {e.prompt_name}")
        seen.setdefault((e.role, settings), None)
    return [[f"as run: {role}", "settings", settings] for role, settings in sorted(seen)]


def _judge_pin(pin: dict[str, Any] | None) -> list[list[Value]]:
    """The judge as the manifest pins it: settings, each call as run, template hashes."""
    if not pin:
        return []
    rows: list[list[Value]] = [
        ["judge pin", "model", _text(pin.get("model"))],
        ["judge pin", "attribution graded", _text(pin.get("attribution"))],
        ["judge pin", "questions judged per cell",
         "every question" if pin.get("limit") is None else _text(pin["limit"])],
        ["judge pin", "cited text shown (most characters per citation)",
         _text(pin.get("cited_chars"))],
        ["judge pin", "cited file shown as",
         "a window around the cited lines" if pin.get("cited_view") == "window"
         else "the file's start, cut at the cap"]]
    for role, settings in sorted((pin.get("roles") or {}).items()):
        rows.append(["judge pin", f"call {role}",
                     ", ".join(f"{k} {_text(v)}" for k, v in sorted(settings.items()))])
    rows.extend(["judge pin", f"template {name}", _text(digest)]
                for name, digest in sorted((pin.get("templates") or {}).items()))
    rows.append(["judge pin", "hash", _text(pin.get("hash"))])
    return rows


def table_configuration(run: RunRecords) -> Table:
    """Table 11: every setting and pin of the run, from its manifest."""
    table = Table("table11", "Table 11 — configuration of record",
                  ["part", "setting", "value"], empty="(the run folder has no manifest.json)",
                  notes=["from the run's manifest.json (config resolved, paths absolute); "
                         "'default': the role's built-in setting, which the 'as run' rows "
                         "read back from the episode records of every role that ran",
                         "chunking: the budget, in tokens, of the turn-boundary chunks the "
                         "chunk store and the curated build share"])
    manifest = run.manifest
    if manifest is None:
        return table
    config = manifest.config
    rows: list[list[Value]] = [["run", "name", _text(config.get("name"))],
                                    ["run", "seed", str(manifest.seed)],
                                    ["run", "cells", str(len(manifest.cells))]]
    rows.extend(_benchmarks(config.get("benchmarks") or []))
    rows.append(["run", "variants", _text(config.get("variants"))])
    rows.extend(_roles(config))
    rows.append(["harness", "harnesses", _text(config.get("harnesses"))])
    rows.append(["chunking", "chunk budget (tokens)", _text(config.get("chunk_tokens"))])
    rows.append(["build", "reorganizer passes (most)", _text(config.get("reorganize_passes"))])
    rows.extend(["other", key, _text(value)] for key, value in config.items()
                if key not in _NAMED)
    rows.extend(_as_run(run))
    pins = manifest.model_dump(mode="json")
    for field, part in _PINS:
        rows.extend([part, name, _text(value)] for name, value in sorted(pins[field].items()))
    rows.extend(_judge_pin(pins.get("judge")))
    known = {f for f, _ in _PINS} | {"config", "seed", "cells", "version", "judge"}
    for field, value in pins.items():
        if field not in known and value not in (None, {}, []):
            if isinstance(value, dict):
                rows.extend(["pin", f"{field}: {k}", _text(v)] for k, v in sorted(value.items()))
            else:
                rows.append(["pin", field, _text(value)])
    table.rows.extend(rows)
    return table
