"""Reason codes (`core.reasons`): every code has its English template, the tolerant parser
reads every sentence older logs hold back into its code, and the dashboard's dictionary has an
English and a Chinese word for every code (parsed from the JS files, so a code the server
sends is never shown as a bare key)."""

from __future__ import annotations

import json
import re

import pytest

from justkernel.core.reasons import SPECS, Reason, ReasonCode, parse, reason_of, waits_for
from justkernel.paths import resources_dir

# sentences the lab wrote before reason codes (copied from older logs), and what they say
OLD_SENTENCES: list[tuple[str, ReasonCode, dict[str, object]]] = [
    ("no team has work left", ReasonCode.NO_WORK, {}),
    ("stopped", ReasonCode.STOPPED, {}),
    ("time limit reached", ReasonCode.TIME_LIMIT, {}),
    ("failed", ReasonCode.FAILED, {}),
    ("the team has nothing left to try", ReasonCode.NOTHING_LEFT, {}),
    ("removed from the dashboard", ReasonCode.REMOVED, {}),
    ("paused", ReasonCode.PAUSED, {}),
    ("no progress: paused by the stall watchdog", ReasonCode.WATCHDOG, {}),
    (
        "Watchdog: no progress for a while (no source change and no new experiment). "
        "Record an experiment plan and change the kernel, or simulate, instead of reading more.",
        ReasonCode.WATCHDOG_NUDGE,
        {},
    ),
    ("turn timed out after 900 s", ReasonCode.TURN_TIMEOUT, {"seconds": 900}),
    ("turn timed out after 0.5 s", ReasonCode.TURN_TIMEOUT, {"seconds": 0.5}),
    (
        "turn failed (transient): SandboxSetupError: bwrap: setting up uid map (x); retry in 5 s",
        ReasonCode.TURN_FAILED,
        {
            "kind": "transient",
            "message": "SandboxSetupError: bwrap: setting up uid map (x)",
            "seconds": 5,
        },
    ),
    (
        "turn failed (rate_limit): slow down",
        ReasonCode.TURN_FAILED,
        {"kind": "rate_limit", "message": "slow down"},
    ),
    (
        "provider openai_compatible paused: the provider refused the API key (401)",
        ReasonCode.PROVIDER_PAUSED,
        {"connection": "openai_compatible", "message": "the provider refused the API key (401)"},
    ),
    (
        "provider my preset paused: balance: insufficient (402)",
        ReasonCode.PROVIDER_PAUSED,
        {"connection": "my preset", "message": "balance: insufficient (402)"},
    ),
    (
        "budget: the run would exceed its cap of 0.25 USD with this call",
        ReasonCode.RUN_CAP,
        {"cap": 0.25, "unit": "USD"},
    ),
    (
        "the run would exceed its cap of 1e+06 tokens with this call",
        ReasonCode.RUN_CAP,
        {"cap": 1e6, "unit": "tokens"},
    ),
    (
        "budget: team team-002 would exceed its cap of 5000 tokens with this call",
        ReasonCode.TEAM_CAP,
        {"team": "team-002", "cap": 5000, "unit": "tokens"},
    ),
    (
        "the team's agent cannot be built: unknown model preset 'gone'",
        ReasonCode.AGENT_UNBUILT,
        {"error": "unknown model preset 'gone'"},
    ),
    ("new messages", ReasonCode.NEW_MESSAGES, {}),
    ("recovered", ReasonCode.RECOVERED, {}),
    ("interrupted", ReasonCode.INTERRUPTED, {}),
    (
        "waiting for a person to approve simulate_kernel, shell (apr-1, apr-2)",
        ReasonCode.AWAITING_APPROVAL,
        {"tools": "simulate_kernel, shell", "ids": "apr-1, apr-2"},
    ),
]


def test_every_code_has_an_english_template_and_every_value_a_kind() -> None:
    assert set(SPECS) == set(ReasonCode)
    for code, spec in SPECS.items():
        named = set(re.findall(r"\{(\w+)\}", spec.template))
        assert named == {name for name, _ in spec.params}, code
        values = {name: ("1" if kind == "number" else "x") for name, kind in spec.params}
        assert "{" not in Reason(code=code, params=values).text(), code


@pytest.mark.parametrize(("sentence", "code", "params"), OLD_SENTENCES)
def test_the_tolerant_parser_reads_each_old_sentence(
    sentence: str, code: ReasonCode, params: dict[str, object]
) -> None:
    found = parse(sentence)
    assert found is not None and found.code == code
    assert found.params == params


def test_every_code_is_covered_by_an_old_sentence() -> None:
    assert {code for _, code, _ in OLD_SENTENCES} == set(ReasonCode)


@pytest.mark.parametrize("code", list(ReasonCode))
def test_a_reasons_own_text_parses_back_to_it(code: ReasonCode) -> None:
    spec = SPECS[code]
    samples = {"number": 2.5, "id": "team-001", "word": "tokens", "text": "it broke: (x); y"}
    samples["names"] = "simulate_kernel, shell"
    reason = Reason(code=code, params={n: samples[k] for n, k in spec.params})
    assert parse(reason.text()) == reason


def test_words_no_code_knows_are_left_alone() -> None:
    for words in ("", None, "the model wanted a break", "budget: something new"):
        assert parse(words) is None


def test_an_events_code_wins_over_its_words_and_an_unknown_code_reads_the_words() -> None:
    coded = reason_of("time_limit", {}, "stopped")
    assert coded == Reason.of(ReasonCode.TIME_LIMIT)
    assert reason_of("from_a_newer_lab", {}, "stopped") == Reason.of(ReasonCode.STOPPED)
    assert reason_of(None, None, "turn timed out after 3 s") == Reason.of(
        ReasonCode.TURN_TIMEOUT, seconds=3
    )


def test_a_provider_pause_names_the_connection_it_waits_for() -> None:
    reason = Reason.of(ReasonCode.PROVIDER_PAUSED, connection="ds-main", message="401", kind="auth")
    assert reason.text() == "provider ds-main paused: 401"  # the kind is a value, not words
    assert waits_for(reason.text()) == "ds-main"
    assert waits_for("budget: the run would exceed its cap of 1 USD with this call") is None


def _dictionary(lang: str) -> dict[str, str]:
    """The `reason_*` words of one language, from the dashboard's JS dictionaries."""
    words: dict[str, str] = {}
    for path in sorted((resources_dir() / "web" / "js" / "i18n").glob("*.js")):
        text = path.read_text(encoding="utf-8")
        block = re.search(rf"\n  {lang}: \{{(.*?)\n  \}}", text, re.S)
        if block is None:
            continue
        for key, value in re.findall(r'^\s+(reason_\w+): ("(?:[^"\\]|\\.)*")', block[1], re.M):
            words[key] = json.loads(value)
    return words


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_dashboard_has_words_for_every_code(lang: str) -> None:
    words = _dictionary(lang)
    for code, spec in SPECS.items():
        key = f"reason_{code.value}"
        assert key in words, f"{lang}: no word for {code.value}"
        for name, _ in (*spec.params, *spec.optional):
            if name != "kind" or code != ReasonCode.PROVIDER_PAUSED:
                assert f"{{{name}}}" in words[key], f"{lang}: {key} leaves out {{{name}}}"
    if lang == "zh":  # Chinese words, not the English copied over
        english = _dictionary("en")
        assert all(words[f"reason_{c.value}"] != english[f"reason_{c.value}"] for c in SPECS)
