"""Figure 5: the model-built stores of a run, checkpointed chunk by chunk as they grew.

Every model-built store (curated, foldered, reorganized) is written through the
builder's history, one snapshot per unit (a chunk of the conversation, or a
pass); measuring that history gives the store at each checkpoint. Figure 5 draws
them, one line per store, x the unit: files, sections (headings), KB and the
mean leaf depth of the combined tree (headings counted as levels). The KB panel
is the conversational counterpart of the skill setting's compression figure.

The paper text we hold says only that this figure is a checkpointed view of the
stores from the build records, with a bytes panel; the other panels are ours.
Nothing is re-run: the snapshots are read from each store's git history.
"""

from __future__ import annotations

from pathlib import Path

from memdir.metrics import measure_history
from memdir.metrics._plots import _pyplot
from memdir.store import Store, StoreError
from memdir.store.history import History
from memdir.study._load import RunRecords

__all__ = ["PANELS", "store_growth"]

PANELS = (("files", "files"), ("sections", "sections (headings)"), ("bytes", "KB"),
          ("mean_depth", "mean leaf depth"))
"""The trajectory columns drawn, with their titles."""


def _series(run: RunRecords) -> list[tuple[str, dict[str, list[float]]]]:
    found = []
    for key, info in sorted(run.stores.items()):
        if info.path is None or info.build is None or not info.build.units:
            continue  # a zero-cost store has no build units to checkpoint
        try:
            traj = measure_history(History(Store(info.path)))
        except StoreError:
            continue
        steps = [float(s) for s in traj.column("step") if s is not None]
        if len(steps) < 2:
            continue
        columns = {name: [float(v or 0.0) for v in traj.column(name)] for name, _ in PANELS}
        columns["bytes"] = [v / 1024 for v in columns["bytes"]]
        found.append((key, {"step": steps, **columns}))
    return found


def store_growth(run: RunRecords, path: Path) -> Path | None:
    """Draw Figure 5 into ``path``; None when the run has no model-built store with a history."""
    series = _series(run)
    if not series:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.5))
    for ax, (name, title) in zip(axes.flat, PANELS, strict=True):
        for key, columns in series:
            xs = columns["step"]
            ax.plot(xs, columns[name], marker="." if len(xs) < 60 else None, linewidth=1.3,
                    label=key)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("build unit (chunk or pass; 0 = the starting store)", fontsize=8)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=1, fontsize=7)
    fig.suptitle("Model-built stores, checkpointed per build unit")
    fig.tight_layout(rect=(0, 0.04 + 0.03 * len(labels), 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
