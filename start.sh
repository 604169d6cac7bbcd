#!/usr/bin/env bash
# JustKernel bootstrap.
#   ./start.sh            install what is missing, then run the lab on its embedded defaults
#   ./start.sh test       install what is missing, then run ruff and the full test suite
#   ./start.sh ARGS...    install what is missing, then run `justkernel ARGS...`
set -euo pipefail
cd "$(dirname "$0")"

# Debian packages the lab uses: compiler and cycle model, sandbox, browser tests, SSH worker
# tests, PostgreSQL store tests. Installed only when missing and only when we are root.
DEBIAN_PACKAGES=(gcc valgrind bubblewrap chromium openssh-server postgresql util-linux procps)

say() { printf '\033[1;34m[start]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[start] error:\033[0m %s\n' "$*" >&2; exit "${2:-1}"; }

ensure_uv() {
  if command -v uv >/dev/null 2>&1; then return; fi
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

ensure_debian_packages() {
  command -v dpkg-query >/dev/null 2>&1 || { say "not a Debian system: skipping system packages (see 'justkernel check')"; return; }
  local missing
  missing=$(missing_debian_packages)
  [ -z "$missing" ] && return
  if [ "$(id -u)" -ne 0 ]; then
    say "missing system packages: $missing"
    say "as root run: apt-get install -y $missing   (the lab runs without them; 'justkernel check' says what each is for)"
    return
  fi
  say "installing system packages: $missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || die "apt-get update failed" 4
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >/dev/null \
    || die "apt-get install failed for: $missing" 4
}

ensure_python_env() {
  uv sync --frozen --quiet || die "uv sync failed (is uv.lock in sync with pyproject.toml?)" 5
}

ensure_uv
ensure_debian_packages
ensure_python_env
export OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false

case "${1:-}" in
  test)
    shift
    say "ruff check"
    uv run --frozen ruff check .
    say "ruff format --check"
    uv run --frozen ruff format --check .
    say "pytest"
    exec uv run --frozen pytest "$@"
    ;;
  "")
    exec uv run --frozen justkernel serve
    ;;
  *)
    exec uv run --frozen justkernel "$@"
    ;;
esac
