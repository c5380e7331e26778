"""The plain settings read without pydantic never disagree with the settings model."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memdir._environment import MODEL_ONLY, PLAIN_DEFAULTS, plain_settings
from memdir.config import Settings, SettingsError


def test_the_plain_settings_and_the_model_name_the_same_settings_and_defaults() -> None:
    assert set(PLAIN_DEFAULTS) | set(MODEL_ONLY) == set(Settings.model_fields)
    defaults = Settings()
    for name, value in PLAIN_DEFAULTS.items():
        assert getattr(defaults, name) == value, name


_NAMES = st.sampled_from([*PLAIN_DEFAULTS, *MODEL_ONLY, "unknown", "ASK_TIMEOUT"])
_VALUES = st.one_of(
    st.integers(-5, 10**20).map(str), st.floats(allow_nan=True).map(repr),
    st.sampled_from(["0", "007", " 5", "5 ", "1_000", "1e3", "+3", "0.5", ".5", "inf", "",
                     "3600", "2.25", "x", "\udcff"]),
    st.text(max_size=8))


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_NAMES, _VALUES, max_size=4))
def test_plain_settings_agree_with_the_model_whenever_they_answer(
        chosen: dict[str, str]) -> None:
    environ = {"MEMDIR_" + (name if name.isupper() else name.upper()): value
               for name, value in chosen.items()}
    plain = plain_settings(environ)
    if plain is None:
        return  # left to the model, which judges and explains
    try:
        model = Settings.from_environment(environ)
    except SettingsError as exc:  # pragma: no cover - a failure of this test
        raise AssertionError(f"plain settings accepted {environ} the model refuses") from exc
    for name in PLAIN_DEFAULTS:
        assert getattr(plain, name) == getattr(model, name), name
        assert type(getattr(plain, name)) is type(getattr(model, name)), name


def test_plain_values_are_read_and_others_are_handed_to_the_model() -> None:
    plain = plain_settings({"MEMDIR_TOOL_TIME_LIMIT": "3600", "memdir_tool_output_chars": "99",
                            "MEMDIR_MODEL": "openai/gpt-5.4-mini", "MEMDIR_OTHER": "x"})
    assert plain is not None
    assert (plain.tool_time_limit, plain.tool_output_chars, plain.model) == (
        3600.0, 99, "openai/gpt-5.4-mini")
    assert plain_settings({"MEMDIR_TOOL_TIME_LIMIT": "soon"}) is None
    assert plain_settings({"MEMDIR_TOOL_TIME_LIMIT": "0"}) is None
    assert plain_settings({"MEMDIR_DATA_DIR": "/data"}) is None
    assert plain_settings({"MEMDIR_AS\u212a_TIMEOUT": "1"}) is not None  # not a setting's name
