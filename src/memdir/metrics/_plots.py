"""Pictures: the growth curves of a trajectory, and a store drawn as a tree.

Images are PNG files drawn with matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memdir.metrics._trajectory import Trajectory
from memdir.metrics._tree import Node, StoreTree

__all__ = ["draw_tree_png", "draw_tree_text", "plot_trajectory"]

_GROWTH = (
    ("files", "files"),
    ("folders", "folders"),
    ("sections", "sections (headings)"),
    ("bytes", "bytes"),
    ("mean_depth", "mean leaf depth"),
    ("max_depth", "max depth"),
)
_ADHERENCE = (
    ("b1", "B1 label distinguishability"),
    ("b2", "B2 content cohesion"),
    ("b3", "B3 scope leakage"),
    ("b4", "B4 distance ~ relatedness (Spearman)"),
)
_COLOURS = {"root": "#444444", "folder": "#1f77b4", "file": "#2ca02c", "heading": "#ff7f0e"}


def _pyplot() -> Any:
    """Load pyplot on the Agg backend, imported on first use (it is slow to load)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _panel_figure(traj: Trajectory, panels: tuple[tuple[str, str], ...], columns: int,
                  title: str, path: Path) -> Path:
    plt = _pyplot()
    steps = [float(s) for s in traj.column("step") if s is not None]
    rows = (len(panels) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 2.8 * rows), squeeze=False)
    for ax, (name, label) in zip(axes.flat, panels, strict=False):
        values = traj.column(name)
        xs = [x for x, v in zip(steps, values, strict=True) if v is not None]
        ys = [v for v in values if v is not None]
        ax.plot(xs, ys, marker="." if len(xs) < 60 else None, linewidth=1.4)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("step", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_trajectory(traj: Trajectory, out_dir: str | Path, prefix: str = "") -> list[Path]:
    """Draw the growth (shape) and adherence (B1-B4) curves; return the PNG paths.

    Args:
        traj: The measured history.
        out_dir: Folder for the images (created if missing).
        prefix: Put before each file name, e.g. ``"conv-48-"``.
    """
    if not traj.rows:
        raise ValueError("The history has no steps to plot; take a snapshot first.")
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    return [
        _panel_figure(traj, _GROWTH, 3, "Store growth per step", folder / f"{prefix}growth.png"),
        _panel_figure(traj, _ADHERENCE, 2, "Taxonomy adherence per step",
                      folder / f"{prefix}adherence.png"),
    ]


def _display(node: Node) -> str:
    if node.kind == "folder":
        return node.name + "/"
    if node.kind == "heading":
        return "#" * node.level + " " + node.name
    return node.name


def draw_tree_text(tree: StoreTree, *, descriptions: bool = True,
                   max_depth: int | None = None) -> str:
    """The combined tree as indented text, folders, files and headings alike."""
    lines = [tree.nodes[0].name]

    def walk(node_id: int, prefix: str) -> None:
        children = tree.nodes[node_id].children
        for k, child_id in enumerate(children):
            child = tree.nodes[child_id]
            last = k == len(children) - 1
            text = _display(child)
            if descriptions and child.kind == "file" and child.description:
                text += f"  ({child.description})"
            lines.append(f"{prefix}{'└── ' if last else '├── '}{text}")
            if max_depth is None or child.depth < max_depth:
                walk(child_id, prefix + ("    " if last else "│   "))

    walk(0, "")
    return "\n".join(lines)


def _layout(tree: StoreTree) -> dict[int, float]:
    xs: dict[int, float] = {}
    next_x = 0.0

    def place(node_id: int) -> float:
        nonlocal next_x
        children = tree.nodes[node_id].children
        if not children:
            xs[node_id] = next_x
            next_x += 1.0
        else:
            positions = [place(c) for c in children]
            xs[node_id] = (positions[0] + positions[-1]) / 2.0
        return xs[node_id]

    place(0)
    return xs


def draw_tree_png(tree: StoreTree, path: str | Path, *, max_labels: int = 300) -> Path:
    """Draw the combined tree as a node-link picture (root on top, depth downwards).

    Nodes are coloured by kind (folder, file, heading); labels are written when the
    tree has at most ``max_labels`` nodes, otherwise only files are named.
    """
    plt = _pyplot()
    xs = _layout(tree)
    leaves = max(1, len(tree.leaves()))
    depth = max(n.depth for n in tree.nodes)
    fig, ax = plt.subplots(figsize=(min(60.0, 3 + leaves * 0.35), 2.5 + 1.2 * depth))
    for node in tree.nodes[1:]:
        parent = tree.nodes[node.parent]
        ax.plot([xs[parent.id], xs[node.id]], [-parent.depth, -node.depth],
                color="#bbbbbb", linewidth=0.8, zorder=1)
    for kind, colour in _COLOURS.items():
        chosen = [n for n in tree.nodes if n.kind == kind]
        ax.scatter([xs[n.id] for n in chosen], [-n.depth for n in chosen], s=28, color=colour,
                   label=kind, zorder=2)
    label_all = len(tree.nodes) <= max_labels
    for node in tree.nodes:
        if label_all or node.kind in ("root", "file"):
            ax.annotate(_display(node)[:40], (xs[node.id], -node.depth), fontsize=6,
                        rotation=35, xytext=(3, 3), textcoords="offset points")
    ax.margins(x=0.05, y=0.15)
    ax.set_yticks([-d for d in range(depth + 1)], [str(d) for d in range(depth + 1)])
    ax.set_ylabel("depth")
    ax.set_xticks([])
    ax.legend(loc="upper right", fontsize=7)
    ax.set_title(f"{tree.nodes[0].name}: {len(tree.nodes)} nodes", fontsize=10)
    fig.tight_layout()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=100)
    plt.close(fig)
    return target
