"""Benchmarks of the conversational study: loaders, questions, gold catalog, grading.

Conversations load into :mod:`memdir.conversation`'s one model, and are chunked
by its one rule; those names are re-exported here. The benchmark files are never
bundled: loaders read the official formats from a path (see ``docs/datasets.md``).
"""

from memdir.bench._schema import Dataset, DatasetError, EvidenceNote, Question
from memdir.bench.datasets import (
    LOCOMO_CATEGORIES,
    PERSONAMEM_CATEGORIES,
    REALTALK_CATEGORIES,
    benchmark_paths,
    load_benchmark,
    load_locomo,
    load_personamem,
    load_personamem_questions,
    load_realtalk,
    personamem_prefix,
    terminal_questions,
)
from memdir.bench.gold import (
    DefectiveGold,
    check_defective_gold,
    defective_gold,
    is_defective,
    split_defective,
)
from memdir.bench.grading import (
    answer_f1,
    extract_option,
    grade_option,
    multi_answer_f1,
    normalize_answer,
    option_correct,
    token_f1,
)
from memdir.conversation import (
    DEFAULT_CHUNK_TOKENS,
    LOCATOR,
    Benchmark,
    Chunk,
    Conversation,
    Session,
    Turn,
    block_locator,
    chunk_conversation,
    count_tokens,
    format_date,
    render_session,
    render_turn,
    split_turns,
    turn_locator,
)

__all__ = [
    "DEFAULT_CHUNK_TOKENS",
    "LOCATOR",
    "LOCOMO_CATEGORIES",
    "PERSONAMEM_CATEGORIES",
    "REALTALK_CATEGORIES",
    "Benchmark",
    "Chunk",
    "Conversation",
    "Dataset",
    "DatasetError",
    "DefectiveGold",
    "EvidenceNote",
    "Question",
    "Session",
    "Turn",
    "answer_f1",
    "benchmark_paths",
    "block_locator",
    "check_defective_gold",
    "chunk_conversation",
    "count_tokens",
    "defective_gold",
    "extract_option",
    "format_date",
    "grade_option",
    "is_defective",
    "load_benchmark",
    "load_locomo",
    "load_personamem",
    "load_personamem_questions",
    "load_realtalk",
    "multi_answer_f1",
    "normalize_answer",
    "option_correct",
    "personamem_prefix",
    "render_session",
    "render_turn",
    "split_defective",
    "split_turns",
    "terminal_questions",
    "token_f1",
    "turn_locator",
]
