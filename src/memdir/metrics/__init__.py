"""Store health: how a store is shaped, how well it keeps its taxonomy, how it grows.

Shape (Panel A) and taxonomy adherence (Panel B) metrics, trajectories over a
store's history, pictures of growth and of the tree, and the health report's alarms.

All similarity is lexical TF-IDF cosine; nothing here loads a model. See
``docs/metrics.md`` for the definitions and the choices made where the paper leaves room.
"""

from memdir.metrics._alarms import (
    DescriptionMismatch,
    DuplicatePair,
    LostFacts,
    StaleFact,
    extract_locators,
    find_duplicates,
    find_stale_descriptions,
    find_stale_facts,
    lost_facts,
    reference_locators,
)
from memdir.metrics._files import FileSummary, summarize
from memdir.metrics._health import HealthReport, HealthThresholds, health_report
from memdir.metrics._measure import (
    Measurer,
    StoreMetrics,
    measure_state,
    measure_store,
    read_state,
)
from memdir.metrics._plots import draw_tree_png, draw_tree_text, plot_trajectory
from memdir.metrics._shape import (
    SHAPE_COLUMNS,
    Dangling,
    ShapeColumn,
    ShapeMetrics,
    gini,
    measure_shape,
)
from memdir.metrics._taxonomy import (
    MIN_UNIT_CHARS,
    Leak,
    SiblingPair,
    TaxonomyMetrics,
    measure_taxonomy,
)
from memdir.metrics._text import TfidfCache
from memdir.metrics._trajectory import (
    COLUMNS,
    StepMetrics,
    Trajectory,
    TrajectoryRow,
    measure_history,
)
from memdir.metrics._tree import HeadingDepth, Node, StoreTree, Unit, build_tree

__all__ = [
    "SHAPE_COLUMNS",
    "COLUMNS",
    "MIN_UNIT_CHARS",
    "Dangling",
    "DescriptionMismatch",
    "DuplicatePair",
    "FileSummary",
    "HeadingDepth",
    "HealthReport",
    "HealthThresholds",
    "Leak",
    "LostFacts",
    "Measurer",
    "Node",
    "ShapeColumn",
    "ShapeMetrics",
    "SiblingPair",
    "StaleFact",
    "StepMetrics",
    "StoreMetrics",
    "StoreTree",
    "TaxonomyMetrics",
    "TfidfCache",
    "Trajectory",
    "TrajectoryRow",
    "Unit",
    "build_tree",
    "draw_tree_png",
    "draw_tree_text",
    "extract_locators",
    "find_duplicates",
    "find_stale_descriptions",
    "find_stale_facts",
    "gini",
    "health_report",
    "lost_facts",
    "measure_history",
    "measure_shape",
    "measure_state",
    "measure_store",
    "measure_taxonomy",
    "plot_trajectory",
    "read_state",
    "reference_locators",
    "summarize",
]
