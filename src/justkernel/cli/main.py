"""Entry point: `justkernel serve | export | import | check | secrets ...`.

Each group of commands lives in its own module and registers itself on `app` here.
"""

from __future__ import annotations

import os

import typer

os.environ.setdefault("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED", "false")

app = typer.Typer(
    name="justkernel",
    help="JustKernel: a lab where LLM agent teams optimize compute kernels, with receipts.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    from justkernel.cli import (
        a2a_cmd,
        approvals_cmd,
        bundle_cmds,
        check_cmd,
        demo_cmd,
        evaluate_cmd,
        judge_cmd,
        judger_cmd,
        provider_cmd,
        report_cmd,
        run_cmd,
        secrets_cmds,
        serve_cmd,
        worker_cmd,
    )

    for module in (
        serve_cmd,
        run_cmd,
        provider_cmd,
        evaluate_cmd,
        bundle_cmds,
        check_cmd,
        secrets_cmds,
        worker_cmd,
        judge_cmd,
        judger_cmd,
        demo_cmd,
        report_cmd,
        a2a_cmd,
        approvals_cmd,
    ):
        module.register(app)


_register()

if __name__ == "__main__":
    app()
