"""A skip is a failure unless the run is explicitly partial.

Tests skip when a tool they need is missing (valgrind, sshd, PostgreSQL, Chromium, ...). A run
that skips them proves nothing about them, so by default a skipped test fails with its reason,
and so does an xfail that is not strict (a strict xfail that fails as expected is a known,
pinned outcome). `pytest --partial` (`./start.sh test --partial`) allows skips and lists every
test it left out, with the reason, at the end.

A pytest plugin: tests/conftest.py loads it for the whole suite (tests/security too).
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

PARTIAL_OPTION = "--partial"
HINT = f"(a full run allows no skips; `./start.sh test {PARTIAL_OPTION}` runs without it)"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        PARTIAL_OPTION,
        action="store_true",
        default=False,
        help="allow skipped tests (missing tools) and list what was left out at the end",
    )


def is_partial(config: pytest.Config) -> bool:
    return bool(config.getoption(PARTIAL_OPTION))


def skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    """The reason pytest recorded for a skip ("Skipped: " stripped)."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
    else:
        reason = str(longrepr)
    return reason.removeprefix("Skipped: ")


def _strict_xfail(item: pytest.Item) -> bool:
    marker = item.get_closest_marker("xfail")
    if marker is None:  # pytest.xfail() called in the test: never strict
        return False
    return bool(marker.kwargs.get("strict", item.config.getini("xfail_strict")))


def _enforce(item: pytest.Item, report: pytest.TestReport) -> None:
    """Turn a skip or a non-strict xfail/xpass of a full run into a failure, in place."""
    if is_partial(item.config):
        return
    if hasattr(report, "wasxfail"):
        if _strict_xfail(item):
            return  # strict: an xpass has already failed, an expected failure is pinned
        why = f"xfail is not strict: {report.wasxfail or 'no reason given'}"
        report.outcome = "failed"
        report.longrepr = f"{why} {HINT}"
        del report.wasxfail
        return
    if report.skipped:
        report.outcome = "failed"
        report.longrepr = f"skipped: {skip_reason(report)} {HINT}"


def _enforce_collection(config: pytest.Config, report: pytest.CollectReport) -> None:
    """A module that skips itself (pytest.skip at import) fails too."""
    if report.skipped and not is_partial(config):
        report.outcome = "failed"
        report.longrepr = f"skipped: {skip_reason(report)} {HINT}"


def left_out(terminal: pytest.TerminalReporter) -> list[str]:
    """`nodeid: reason` of every test a partial run skipped or xfailed."""
    lines = []
    for key in ("skipped", "xfailed"):
        for report in terminal.stats.get(key, []):
            if key == "xfailed":
                reason = f"xfail: {getattr(report, 'wasxfail', '')}"
            else:
                reason = skip_reason(report)
            lines.append(f"{report.nodeid or report.fspath}: {reason}")
    return lines


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item,
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    _enforce(item, report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    _enforce_collection(collector.config, report)
    return report


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """The partial run's account of what it did not test."""
    if not is_partial(config):
        return
    terminal = terminalreporter
    lines = left_out(terminal)
    terminal.section("left out of this partial run")
    if not lines:
        terminal.write_line("nothing: every collected test ran")
        return
    for line in lines:
        terminal.write_line(line)
    count = f"{len(lines)} test{'s' if len(lines) != 1 else ''}"
    terminal.write_line(f"{count} left out; a full run fails on each skip and loose xfail")
