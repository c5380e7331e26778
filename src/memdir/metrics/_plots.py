"""Pictures: the growth curves of a trajectory, and a store drawn as a tree.

Images are PNG files drawn with matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memdir.metrics._shape import SHAPE_COLUMNS
from memdir.metrics._trajectory import Trajectory
from memdir.metrics._tree import Node, StoreTree

__all__ = ["draw_tree_png", "draw_tree_text", "plot_trajectory"]

_COUNTS = frozenset(c.column for c in SHAPE_COLUMNS if c.count)
"""Panels whose values are whole numbers: integer ticks only."""
_GROWTH = tuple((c.column, c.title) for c in SHAPE_COLUMNS if c.chart)
_ADHERENCE = (
    ("b1", "B1 label distinguishability"),
    ("b2", "B2 content cohesion"),
    ("b3", "B3 scope leakage"),
    ("b4", "B4 distance ~ relatedness (Spearman)"),
)
_RANGES: dict[str, tuple[float, float]] = {"b3": (0.0, 1.0), "b4": (-1.0, 1.0)}
"""Fixed value axes for the bounded measures (a share, a correlation)."""
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
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    steps = [float(s) for s in traj.column("step") if s is not None]
    rows = (len(panels) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(3.6 * columns, 2.7 * rows), squeeze=False)
    for ax, (name, label) in zip(axes.flat, panels, strict=False):
        values = traj.column(name)
        xs = [x for x, v in zip(steps, values, strict=True) if v is not None]
        ys = [v for v in values if v is not None]
        ax.plot(xs, ys, marker="." if len(xs) < 60 else None, linewidth=1.4)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("step", fontsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if name in _COUNTS:
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
        # From zero (or the measure's fixed range), so a 1 % change stays a 1 % change
        # on the page instead of filling the panel.
        low, high = _RANGES.get(name, (0.0, None))
        top = max([*ys, 0.0]) if high is None else high
        bottom = min([*ys, low])
        ax.set_ylim(bottom, top + 0.06 * (top - bottom or 1.0))
        ax.set_xlim(min(steps, default=0) - 0.3, max(steps, default=0) + 0.3)
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
        _panel_figure(traj, _GROWTH, 4, "Store growth per step", folder / f"{prefix}growth.png"),
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
    stack: list[tuple[int, str, bool]] = [(c, "", k == len(tree.nodes[0].children) - 1)
                                          for k, c in enumerate(tree.nodes[0].children)][::-1]
    while stack:  # depth first without recursion: a thousand levels draw like three
        child_id, prefix, last = stack.pop()
        child = tree.nodes[child_id]
        text = _display(child)
        if descriptions and child.kind == "file" and child.description:
            text += f"  ({child.description})"
        lines.append(f"{prefix}{'└── ' if last else '├── '}{text}")
        if max_depth is None or child.depth < max_depth:
            inner = prefix + ("    " if last else "│   ")
            kids = child.children
            stack.extend((c, inner, k == len(kids) - 1) for k, c in reversed(list(enumerate(kids))))
    return "\n".join(lines)


def _rows(tree: StoreTree, headings: bool) -> list[Node]:
    """The nodes to draw in the order a file listing shows them (each parent above its children)."""
    order: list[Node] = []
    stack = [0]
    while stack:
        node = tree.nodes[stack.pop()]
        if node.kind == "heading" and not headings:
            continue
        order.append(node)
        stack.extend(reversed(node.children))
    return order


def draw_tree_png(tree: StoreTree, path: str | Path, *, max_labels: int = 300) -> Path:
    """Draw the combined tree as a node-link picture laid out like a file listing.

    One row per node, parents above their children and indented by depth, every
    node labelled (folders with a trailing ``/``, headings with their ``#`` marks)
    and coloured by kind; links run down from each parent to its children, so a
    store of hundreds of files stays readable (the picture grows downwards).
    When the tree has more than ``max_labels`` nodes, headings are left out
    and only folders and files are drawn; the title says so.
    """
    plt = _pyplot()
    headings = len(tree.nodes) <= max_labels
    rows = _rows(tree, headings)
    row_of = {node.id: k for k, node in enumerate(rows)}
    depth = max(n.depth for n in rows)
    longest = max(len(_display(n)[:60]) for n in rows)
    width = min(40.0, max(7.0, 1.5 + 0.55 * depth + 0.075 * longest))
    fig, ax = plt.subplots(figsize=(width, max(2.5, 0.9 + 0.19 * len(rows))))
    for node in rows:
        kids = [row_of[c] for c in node.children if c in row_of]
        if not kids:
            continue
        y = -row_of[node.id]
        ax.plot([node.depth, node.depth], [y, -max(kids)], color="#bbbbbb", linewidth=0.8,
                zorder=1)
        for k in kids:
            ax.plot([node.depth, node.depth + 1], [-k, -k], color="#bbbbbb", linewidth=0.8,
                    zorder=1)
    for kind, colour in _COLOURS.items():
        chosen = [n for n in rows if n.kind == kind]
        if chosen:
            ax.scatter([n.depth for n in chosen], [-row_of[n.id] for n in chosen], s=22,
                       color=colour, label=kind, zorder=2)
    for node in rows:
        text = _display(node)
        ax.annotate(text if len(text) <= 60 else text[:57] + "...",
                    (node.depth, -row_of[node.id]), xytext=(6, 0), textcoords="offset points",
                    va="center", fontsize=7,
                    fontweight="bold" if node.kind in ("root", "folder") else "normal",
                    color="#555555" if node.kind == "heading" else "black")
    ax.set_xlim(-0.4, depth + 0.4 + longest * 0.075 / 0.55)
    ax.set_ylim(-len(rows) + 0.3, 0.9)
    ax.set_xticks(range(depth + 1), [str(d) for d in range(depth + 1)])
    ax.set_xlabel("depth")
    ax.set_yticks([])
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.legend(loc="upper right", fontsize=7, frameon=False)
    files = sum(1 for n in tree.nodes if n.kind == "file")
    folders = sum(1 for n in tree.nodes if n.kind == "folder")
    sections = len(tree.nodes) - files - folders - 1
    shown = "" if headings else f"\n(headings not drawn: more than {max_labels} nodes)"
    ax.set_title(f"{tree.nodes[0].name}: {folders} folders, {files} files, {sections} "
                 f"headings{shown}", fontsize=10, loc="left")
    fig.tight_layout()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=100)
    plt.close(fig)
    return target
