"""The pictures: the tree laid out one row per node, headings dropped for big stores."""

from __future__ import annotations

import struct
from pathlib import Path

from memdir.metrics import draw_tree_png, measure_store
from memdir.metrics._plots import _rows
from memdir.sample import build_sample_store
from memdir.store import Store


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def _big(root: Path, files: int) -> Store:
    store = Store(root, create=True)
    for i in range(files):
        store.write(f"/memories/f{i % 12}/note-{i}.md",
                    f"---\nname: note-{i}\ndescription: Note {i}\n---\n# Note {i}\n## Part\ntext\n")
    return store


def test_a_small_tree_draws_every_node_with_its_headings(tmp_path: Path) -> None:
    tree = measure_store(build_sample_store(tmp_path / "s")).tree
    assert len(_rows(tree, headings=True)) == len(tree.nodes)
    width, height = _png_size(draw_tree_png(tree, tmp_path / "tree.png"))
    assert height > 0.19 * 100 * len(tree.nodes) * 0.9 and width >= 700


def test_a_store_of_hundreds_of_files_stays_one_row_per_file(tmp_path: Path) -> None:
    tree = measure_store(_big(tmp_path / "big", 240)).tree
    rows = _rows(tree, headings=False)
    assert {n.kind for n in rows} == {"root", "folder", "file"}
    assert len(rows) == 1 + 12 + 240
    # every parent comes before its children, as in a listing
    seen: set[int] = set()
    for node in rows:
        assert node.id == 0 or node.parent in seen
        seen.add(node.id)
    width, height = _png_size(draw_tree_png(tree, tmp_path / "big.png"))
    assert height >= 0.19 * 100 * len(rows) and width <= 4000
