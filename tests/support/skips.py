"""A skip is a failure unless the run is explicitly partial.

Tests skip when a tool they need is missing (valgrind, sshd, PostgreSQL, Chromium, ...). A run
that skips them proves nothing about them, so by default a skipped test fails with its reason,
and so does an xfail that is not strict (a strict xfail that fails as expected is a known,
pinned outcome). A module that skips itself fails the run at the end. `pytest --partial`
(`./start.sh test --partial`) allows skips and lists every test it left out, with the reason.

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


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(SkipRules(partial=bool(config.getoption(PARTIAL_OPTION))))


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


class SkipRules:
    """The hooks, with the run's mode and the modules that skipped themselves."""

    def __init__(self, partial: bool) -> None:
        self.partial = partial
        self.skipped_modules: list[str] = []

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if not self.partial:
            _fail_skip(item, report)
        return report

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # failing the collection itself would stop the whole session: fail the run at the end
        if report.skipped:
            self.skipped_modules.append(f"{report.nodeid or report.fspath}: {skip_reason(report)}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.skipped_modules and not self.partial and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        terminal = terminalreporter
        if not self.partial:
            if self.skipped_modules:
                terminal.section("modules that skipped: a full run fails on them", red=True)
                for line in self.skipped_modules:
                    terminal.write_line(f"skipped: {line} {HINT}")
            return
        lines = [*self.skipped_modules, *_left_out_tests(terminal)]
        terminal.section("left out of this partial run")
        if not lines:
            terminal.write_line("nothing: every collected test ran")
            return
        for line in lines:
            terminal.write_line(line)
        count = f"{len(lines)} test{'s' if len(lines) != 1 else ''}"
        terminal.write_line(f"{count} left out; a full run fails on each skip and loose xfail")


def _fail_skip(item: pytest.Item, report: pytest.TestReport) -> None:
    """Turn a skip or a non-strict xfail/xpass into a failure, in place."""
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


def _left_out_tests(terminal: pytest.TerminalReporter) -> list[str]:
    """`nodeid: reason` of every test a partial run skipped or xfailed."""
    lines = []
    for report in terminal.stats.get("skipped", []):
        if isinstance(report, pytest.TestReport):
            lines.append(f"{report.nodeid}: {skip_reason(report)}")
    for report in terminal.stats.get("xfailed", []):
        lines.append(f"{report.nodeid}: xfail: {getattr(report, 'wasxfail', '')}")
    return lines
