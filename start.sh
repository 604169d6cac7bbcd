#!/usr/bin/env bash
# JustKernel bootstrap.
#   ./start.sh            install what is missing, then run the lab on its embedded defaults
#   ./start.sh test       install what is missing, check what the suite needs, then run ruff,
#                         the import-layer contract (lint-imports) and the full test suite;
#                         anything missing or any skip fails it
#   ./start.sh test --partial [PYTEST ARGS]   the same, but missing capabilities and skips are
#                         allowed; pytest lists what was left out at the end
#   ./start.sh ARGS...    install what is missing, then run `justkernel ARGS...`
set -euo pipefail
cd "$(dirname "$0")"

# Debian packages the lab uses, and what needs each. Installed only when missing and only when
# we are root. The lab runs without them (a warning); `./start.sh test` does not (an error).
declare -A NEEDED_FOR=(
  [gcc]="compiling CPU candidates"
  [binutils]="static checks of compiled kernels (objdump)"
  [valgrind]="the cycle model (cachegrind) and every hidden-judge test"
  [bubblewrap]="the sandbox that runs candidate code"
  [util-linux]="sandbox limits and uid drop (prlimit, setpriv), PostgreSQL tests as root (runuser)"
  [procps]="process checks of the sandbox and worker tests"
  [git]="team workspaces"
  [chromium]="the dashboard browser tests"
  [openssh-server]="the SSH worker tests (sshd on loopback)"
  [openssh-client]="the SSH worker tests (ssh-keygen)"
  [postgresql]="the PostgreSQL store tests"
  [fonts-noto-cjk]="Chinese glyphs in the dashboard and its screenshots (without it 中文 shows as boxes)"
)
DEBIAN_PACKAGES=(gcc binutils valgrind bubblewrap util-linux procps git chromium openssh-server
  openssh-client postgresql fonts-noto-cjk)
MODE="${1:-}"
PARTIAL=0  # ./start.sh test --partial
if [ "$MODE" = test ]; then
  for arg in "${@:2}"; do [ "$arg" = --partial ] && PARTIAL=1; done
fi
STRICT=0  # missing packages and capabilities are errors
[ "$MODE" = test ] && [ "$PARTIAL" = 0 ] && STRICT=1
# JUSTKERNEL_NO_INSTALL=1: install nothing (no pip, apt-get or uv sync), only check; what is
# missing is reported exactly as it would be after a failed install.
NO_INSTALL="${JUSTKERNEL_NO_INSTALL:-0}"

say() { printf '\033[1;34m[start]\033[0m %s\n' "$*" >&2; }
warn() { printf '\033[1;33m[start] warning:\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[start] error:\033[0m %s\n' "$1" >&2; exit "${2:-1}"; }

ensure_uv() {
  if command -v uv >/dev/null 2>&1; then return; fi
  [ "$NO_INSTALL" = 1 ] && die "uv is not on PATH (JUSTKERNEL_NO_INSTALL=1: not installing it)" 3
  say "installing uv with pip"
  python3 -m pip install --quiet --user uv 2>/dev/null || python3 -m pip install --quiet uv \
    || die "could not install uv (try: python3 -m pip install uv)" 3
  export PATH="$HOME/.local/bin:$PATH"
  command -v uv >/dev/null 2>&1 || die "uv installed but not on PATH (add ~/.local/bin to PATH)" 3
}

missing_debian_packages() {
  local missing=()
  for pkg in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$pkg")
  done
  echo "${missing[@]:-}"
}

# Missing packages we could not install: an error for `test` (naming each and what needs it),
# a warning for the lab.
packages_not_installed() {
  local why="$1" missing="$2" pkg
  for pkg in $missing; do
    if [ "$STRICT" = 1 ]; then
      printf '\033[1;31m[start] error:\033[0m package %s is missing: needed for %s\n' \
        "$pkg" "${NEEDED_FOR[$pkg]}" >&2
    else
      warn "package $pkg is missing: needed for ${NEEDED_FOR[$pkg]}"
    fi
  done
  if [ "$STRICT" = 1 ]; then
    die "$why; as root run: apt-get install -y $missing" 4
  fi
  warn "$why; as root run: apt-get install -y $missing   (the lab runs without them; 'justkernel check' says what each is for)"
}

ensure_debian_packages() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    say "not a Debian system: not installing system packages (see 'justkernel check')"
    return
  fi
  local missing
  missing=$(missing_debian_packages)
  [ -z "$missing" ] && return
  if [ "$NO_INSTALL" = 1 ]; then
    packages_not_installed "JUSTKERNEL_NO_INSTALL=1: not installing $missing" "$missing"
    return
  fi
  if [ "$(id -u)" -ne 0 ]; then
    packages_not_installed "not root: cannot install $missing" "$missing"
    return
  fi
  say "installing system packages: $missing"
  export DEBIAN_FRONTEND=noninteractive
  # shellcheck disable=SC2086
  if ! { apt-get update -qq >/dev/null \
    && apt-get install -y -qq --no-install-recommends $missing >/dev/null; }; then
    packages_not_installed "apt-get could not install $missing" "$(missing_debian_packages)"
  fi
}

ensure_python_env() {
  if [ "$NO_INSTALL" = 1 ]; then
    export UV_NO_SYNC=1  # use the environment as it is
    return
  fi
  uv sync --frozen --quiet || die "uv sync failed (is uv.lock in sync with pyproject.toml?)" 5
}

# The capabilities the suite needs (`justkernel check --require-for-tests`, the same list
# `justkernel check` prints). Missing ones fail the run, unless it is partial.
preflight() {
  say "preflight: what the test suite needs"
  if uv run --frozen justkernel check --require-for-tests; then return; fi
  if [ "$PARTIAL" = 1 ]; then
    warn "partial run: the tests that need what is missing will be left out and listed at the end"
    return
  fi
  die "the test suite cannot run here without the capabilities above (./start.sh test --partial runs what it can and lists what it left out)" 6
}

ensure_uv
ensure_debian_packages
ensure_python_env
export OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false

case "$MODE" in
  test)
    shift
    preflight
    say "ruff check"
    uv run --frozen ruff check .
    say "ruff format --check"
    uv run --frozen ruff format --check .
    say "lint-imports: the one-way layer contract (pyproject.toml [tool.importlinter])"
    uv run --frozen lint-imports
    if [ "$PARTIAL" = 1 ]; then
      say "pytest, partial: skips are allowed and listed at the end"
    else
      say "pytest: a skip fails the run"
    fi
    if [ "$#" -eq 0 ]; then
      # the suite's tests are independent: one process per core, idle ones steal queued tests
      set -- -n "${JUSTKERNEL_TEST_WORKERS:-2}" --dist worksteal
    fi
    exec uv run --frozen pytest "$@"
    ;;
  "")
    exec uv run --frozen justkernel serve
    ;;
  *)
    exec uv run --frozen justkernel "$@"
    ;;
esac
