"""The exact commands and environments of the CANN pipeline (pure functions), and the
set_env.sh capture run for real with bash on the fixture script."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

from justkernel.toolchains.cann.commands import (
    build_argv,
    capture_env_argv,
    example_argv,
    example_build_argv,
    example_configure_argv,
    install_argv,
    msprof_device_argv,
    msprof_simulator_argv,
    parse_env0,
    patch_presets,
    runtime_env,
    simulator_env,
    vendor_dir,
)
from justkernel.toolchains.cann.exec import run_command

TOOLKIT = Path(__file__).resolve().parent.parent / "fixtures" / "cann" / "toolkit"
HOME = Path("/opt/Ascend/ascend-toolkit/latest")
EXAMPLE = Path("/w/example-build/test_aclnn_confusion_mul_grad")


def test_build_and_install_commands() -> None:
    assert build_argv("/bin/bash") == ["/bin/bash", "build.sh"]
    run = Path("/w/project/build_out/custom_opp_ubuntu_aarch64.run")
    assert install_argv("/bin/bash", run, Path("/w/vendor")) == [
        "/bin/bash",
        "/w/project/build_out/custom_opp_ubuntu_aarch64.run",
        "--install-path=/w/vendor",
    ]
    assert vendor_dir(Path("/w/vendor"), "customize") == Path("/w/vendor/vendors/customize")


def test_example_build_and_run_commands() -> None:
    vendor = Path("/w/vendor/vendors/customize")
    assert example_configure_argv(
        "cmake", Path("/w/project/examples"), Path("/w/eb"), HOME, vendor
    ) == [
        "cmake",
        "-S",
        "/w/project/examples",
        "-B",
        "/w/eb",
        "-DCMAKE_BUILD_TYPE=Release",
        "-DASCEND_HOME_PATH=/opt/Ascend/ascend-toolkit/latest",
        "-DCUSTOM_OPP_PATH=/w/vendor/vendors/customize",
    ]
    assert example_build_argv("cmake", Path("/w/eb")) == ["cmake", "--build", "/w/eb", "-j", "4"]
    assert example_build_argv("cmake", Path("/w/eb"), jobs=0)[-1] == "1"
    assert example_argv(EXAMPLE, Path("/p/cases/c01"), Path("/w/out/c01")) == [
        str(EXAMPLE),
        "/p/cases/c01",
        "/w/out/c01",
    ]


def test_msprof_commands() -> None:
    program = example_argv(EXAMPLE, Path("/p/cases/p01"), Path("/w/out"))
    assert msprof_simulator_argv("msprof", "Ascend910B4", Path("/w/prof"), program) == [
        "msprof",
        "op",
        "simulator",
        "--soc-version=Ascend910B4",
        "--output=/w/prof",
        *program,
    ]
    named = msprof_simulator_argv(
        "msprof", "Ascend910B4", Path("/w/prof"), program, kernel_name="confusion_mul_grad"
    )
    assert named[5] == "--kernel-name=confusion_mul_grad" and named[6:] == program
    assert msprof_device_argv("/t/bin/msprof", Path("/w/prof"), program) == [
        "/t/bin/msprof",
        "op",
        "--output=/w/prof",
        "--launch-count=1",
        *program,
    ]


def test_runtime_and_simulator_environments_prepend_to_what_is_there() -> None:
    base = {"PATH": "/usr/bin", "LD_LIBRARY_PATH": "/opt/lib64"}
    env = runtime_env(base, Path("/w/vendor"), "customize")
    assert env["ASCEND_CUSTOM_OPP_PATH"] == "/w/vendor/vendors/customize"
    assert env["LD_LIBRARY_PATH"] == "/w/vendor/vendors/customize/op_api/lib:/opt/lib64"
    assert env["PATH"] == "/usr/bin" and base == {
        "PATH": "/usr/bin",
        "LD_LIBRARY_PATH": "/opt/lib64",
    }
    sim = simulator_env(env, HOME, "Ascend910B4")
    assert sim["LD_LIBRARY_PATH"] == (
        "/opt/Ascend/ascend-toolkit/latest/tools/simulator/Ascend910B4/lib:"
        "/w/vendor/vendors/customize/op_api/lib:/opt/lib64"
    )
    again = runtime_env({"ASCEND_CUSTOM_OPP_PATH": "/other"}, Path("/v"), "x")
    assert again["ASCEND_CUSTOM_OPP_PATH"] == "/v/vendors/x:/other"
    assert again["LD_LIBRARY_PATH"] == "/v/vendors/x/op_api/lib"


def test_presets_get_this_hosts_toolkit_and_nothing_else_changes() -> None:
    presets = {
        "version": 1,
        "configurePresets": [
            {
                "name": "default",
                "cacheVariables": {
                    "ASCEND_CANN_PACKAGE_PATH": {"type": "PATH", "value": "/author/Ascend/latest"},
                    "vendor_name": {"type": "STRING", "value": "customize"},
                },
            },
            {"name": "plain", "cacheVariables": {"ASCEND_CANN_PACKAGE_PATH": "/x"}},
        ],
    }
    out = patch_presets(presets, HOME)
    assert out["configurePresets"][0]["cacheVariables"]["ASCEND_CANN_PACKAGE_PATH"] == {
        "type": "PATH",
        "value": str(HOME),
    }
    assert out["configurePresets"][1]["cacheVariables"]["ASCEND_CANN_PACKAGE_PATH"] == str(HOME)
    assert out["configurePresets"][0]["cacheVariables"]["vendor_name"]["value"] == "customize"
    assert presets["configurePresets"][0]["cacheVariables"]["ASCEND_CANN_PACKAGE_PATH"] == {
        "type": "PATH",
        "value": "/author/Ascend/latest",
    }


def test_set_env_capture_runs_the_script_and_reads_the_environment(tmp_path: Path) -> None:
    toolkit = tmp_path / "ascend toolkit"  # a space in the path must survive
    (toolkit / "latest").mkdir(parents=True)
    shutil.copy(TOOLKIT / "set_env.sh", toolkit / "set_env.sh")
    bash = shutil.which("bash")
    assert bash is not None
    argv = capture_env_argv(bash, toolkit / "set_env.sh")
    assert argv == [bash, "-c", argv[2], "justkernel-set-env", str(toolkit / "set_env.sh")]
    done = subprocess.run(argv, env={"PATH": "/usr/bin:/bin", "ODD": "a\nb"}, capture_output=True)
    env = parse_env0(done.stdout)
    assert done.returncode == 0
    assert env["ASCEND_HOME_PATH"] == str(toolkit / "latest")
    assert env["PATH"].startswith(f"{toolkit}/latest/bin:") and env["PATH"].endswith(
        "/usr/bin:/bin"
    )
    assert env["ODD"] == "a\nb"  # NUL-separated: newlines in values survive
    (toolkit / "set_env.sh").write_text("return 3\n")
    failed = subprocess.run(argv, env={"PATH": "/usr/bin:/bin"}, capture_output=True)
    assert failed.returncode == 97 and failed.stdout == b""


def test_parse_env0_ignores_empty_records() -> None:
    assert parse_env0(b"A=1\0B=x=y\0\0C=\0junk\0") == {"A": "1", "B": "x=y", "C": ""}


def _processes_with(arg: str) -> list[int]:
    """Pids whose command line holds `arg`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and arg.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


async def test_run_command_keeps_output_and_kills_on_timeout(tmp_path: Path) -> None:
    ok = await run_command(
        ["bash", "-c", "echo out; echo err >&2; exit 3"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        wall_seconds=10,
        output_dir=tmp_path / "raw",
        name="x",
    )
    assert (ok.returncode, ok.stdout, ok.stderr, ok.ok) == (3, "out\n", "err\n", False)
    assert ok.outcome() == "exit 3" and ok.tail() == ["err"]
    assert (tmp_path / "raw" / "x.stdout").read_text() == "out\n"
    nap = f"30.{uuid.uuid4().int % 10**9:09d}"  # a duration no other process sleeps
    slow = await run_command(
        ["bash", "-c", f"echo started; sleep {nap} & sleep {nap}; wait"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        wall_seconds=0.5,
        output_dir=tmp_path / "raw",
        name="slow",
    )
    assert _processes_with(nap) == []  # the shell and both sleeps were killed, not waited for
    assert slow.timed_out and slow.returncode is None and slow.stdout == "started\n"
    assert slow.outcome().startswith("timed out")
    killed = await run_command(
        ["bash", "-c", "kill -SEGV $$"],
        cwd=tmp_path,
        env={},
        wall_seconds=10,
        output_dir=tmp_path / "raw",
        name="segv",
    )
    assert killed.signal_name == "SIGSEGV" and killed.outcome() == "killed by SIGSEGV"
