"""The conversational study as configuration: cells, runs, records, reports.

A YAML config expands into cells (benchmark x conversation x variant x builder
model x search model x harness); :func:`run_study` builds each store once and runs
each cell as an inspect_ai eval whose samples ask the unanswered questions through
:func:`memdir.agents.ask`, grade them and write one record per question (the eval
logs hold the transcripts); reports read only those records. See ``docs/study.md``.
"""

from memdir.study._config import (
    BUILT_VARIANTS,
    HARNESSES,
    VARIANTS,
    BenchmarkSpec,
    Cell,
    ConfigError,
    Harness,
    RoleSettings,
    StudyConfig,
    StudyVariant,
    load_config,
)
from memdir.study._data import DataCheck, DataError, check_data, resolve_data_dir
from memdir.study._diagnostics import cited_locators, episode_reads, recorded_reads, replay_reads
from memdir.study._grading import grade_answer, judge_answer
from memdir.study._load import RunRecords, load_run
from memdir.study._manifest import read_manifest, write_manifest
from memdir.study._paper import PaperCount, table_cells
from memdir.study._records import (
    STUDY_RECORD_VERSION,
    CellStatus,
    Grades,
    QuestionRecord,
    ReadSpan,
    StoreInfo,
)
from memdir.study._report import build_tables, primary_score, write_report
from memdir.study._roles import ASK_VARIANT, HARNESS_TOOLSET, search_role
from memdir.study._runner import cell_dir, log_dir, run_study, run_study_async
from memdir.study._scores import score_name
from memdir.study._stats import SignTest, pooled_sign_test, sign_test
from memdir.study._stores import (
    BuilderUnavailable,
    CellInput,
    StoreBuildFailed,
    build_store,
    cell_input,
    resolve_conversation,
)

__all__ = [
    "ASK_VARIANT",
    "BUILT_VARIANTS",
    "HARNESSES",
    "HARNESS_TOOLSET",
    "STUDY_RECORD_VERSION",
    "VARIANTS",
    "BenchmarkSpec",
    "BuilderUnavailable",
    "StoreBuildFailed",
    "Cell",
    "CellInput",
    "DataCheck",
    "DataError",
    "PaperCount",
    "CellStatus",
    "ConfigError",
    "Grades",
    "Harness",
    "QuestionRecord",
    "ReadSpan",
    "RunRecords",
    "SignTest",
    "RoleSettings",
    "StoreInfo",
    "StudyConfig",
    "StudyVariant",
    "build_store",
    "build_tables",
    "cell_dir",
    "cell_input",
    "check_data",
    "cited_locators",
    "episode_reads",
    "grade_answer",
    "judge_answer",
    "load_config",
    "load_run",
    "log_dir",
    "pooled_sign_test",
    "primary_score",
    "score_name",
    "read_manifest",
    "recorded_reads",
    "replay_reads",
    "resolve_conversation",
    "resolve_data_dir",
    "run_study",
    "run_study_async",
    "search_role",
    "sign_test",
    "table_cells",
    "write_manifest",
    "write_report",
]
