"""The scale benchmark's anchors written in Python, each run as its own process.

Every anchor does, in the plainest way, the work a memdir row must do at the
least, so the row's time can be read against it:

- ``listing STORE``: walk the tree and read each markdown file's first lines
  (the frontmatter a listing shows), as ``find`` plus ``head`` would;
- ``frontmatter STORE``: read every markdown file and parse its YAML header with
  PyYAML (libyaml's loader where present) and find its ``/memories/`` references:
  a pre-commit check of the kind Letta's MemFS runs, the floor of ``memdir lint``;
- ``tfidf STORE``: read every markdown file and fit scikit-learn's
  ``TfidfVectorizer`` on them: the lexical pass any TF-IDF health check makes once;
- ``fts5-build STORE DB``: build an SQLite FTS5 index of every file (path, body);
- ``fts5-query DB QUERY``: open that index in a new process and run one ranked
  (bm25) query for the top 10 files.

Run: ``python benchmarks/_scale_anchors.py ANCHOR ARGS...``
"""

from __future__ import annotations

import os
import re
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

_REF = re.compile(r"/memories/[^\s)>\]]+\.md")


def markdown_files(root: Path) -> Iterator[Path]:
    """Every ``.md`` file below ``root``, dot folders skipped (iterative walk)."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".md"):
                yield Path(folder) / name


def listing(root: Path) -> str:
    """Each file's path and first four lines (its frontmatter), one after the other."""
    out = []
    for path in markdown_files(root):
        with path.open("rb") as handle:
            head = b"".join(handle.readline() for _ in range(4))
        out.append(f"{path}\n{head.decode('utf-8', 'replace')}")
    return "".join(out)


def frontmatter(root: Path) -> int:
    """Files whose header parses; prints the count of headers and references found."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    good = bad = refs = 0
    for path in markdown_files(root):
        text = path.read_text(encoding="utf-8", errors="replace")
        end = text.find("\n---\n", 4) if text.startswith("---\n") else -1
        try:
            header = yaml.load(text[4:end], Loader=loader) if end > 0 else None  # noqa: S506
        except yaml.YAMLError:
            header = None
        if isinstance(header, dict) and "name" in header and "description" in header:
            good += 1
        else:
            bad += 1
        refs += len(_REF.findall(text))
    print(f"{good} good headers, {bad} bad, {refs} references")
    return good


def tfidf(root: Path) -> int:
    """Rows of the fitted matrix (one per file)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = [p.read_text(encoding="utf-8", errors="replace") for p in markdown_files(root)]
    matrix = TfidfVectorizer().fit_transform(texts)
    print(f"{matrix.shape[0]} rows, {matrix.shape[1]} terms, {matrix.nnz} weights")
    return int(matrix.shape[0])


def fts5_build(root: Path, db: Path) -> int:
    """Files indexed into a fresh FTS5 table ``docs(path, body)``."""
    db.unlink(missing_ok=True)
    con = sqlite3.connect(db)
    con.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, body)")
    count = 0
    with con:
        for path in markdown_files(root):
            body = path.read_text(encoding="utf-8", errors="replace")
            con.execute("INSERT INTO docs VALUES (?, ?)", (str(path), body))
            count += 1
    con.close()
    return count


def fts5_query(db: Path, query: str) -> list[str]:
    """The top 10 paths for ``query`` (words OR-ed), best bm25 first."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    match = " OR ".join(f'"{w}"' for w in query.split())
    rows = con.execute("SELECT path FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 10",
                       (match,)).fetchall()
    con.close()
    paths = [r[0] for r in rows]
    print("\n".join(paths))
    return paths


def main(argv: list[str]) -> None:
    """Run the anchor named by ``argv[0]``."""
    name, *args = argv
    if name == "listing":
        sys.stdout.write(listing(Path(args[0])))
    elif name == "frontmatter":
        frontmatter(Path(args[0]))
    elif name == "tfidf":
        tfidf(Path(args[0]))
    elif name == "fts5-build":
        print(fts5_build(Path(args[0]), Path(args[1])))
    elif name == "fts5-query":
        if not fts5_query(Path(args[0]), args[1]):
            raise SystemExit("no hit")
    else:
        raise SystemExit(f"unknown anchor {name!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
