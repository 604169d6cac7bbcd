#!/usr/bin/env bash
# JustKernel demo launcher for macOS (bash): double-click it in Finder, or run ./start.command.
# It starts `uv run justkernel demo --open`: the dashboard playing a recorded session in your
# browser. It needs only uv (which brings its own Python) and a browser: no compiler, no model,
# no network after the first start. Extra arguments go to `justkernel demo` (--port, --speed).
# (Linux: ./start.sh; Windows: start.cmd.)
set -u
cd "$(dirname "$0")" || exit 1

# A double-clicked script may not see the PATH your shell profile sets: look where uv's own
# installer and Homebrew put it, too.
if ! command -v uv >/dev/null 2>&1; then
  for dir in "$HOME/.local/bin" "$HOME/.cargo/bin" /opt/homebrew/bin; do
    if [ -x "$dir/uv" ]; then PATH="$dir:$PATH"; fi
  done
fi

if ! command -v uv >/dev/null 2>&1; then
  cat <<'MESSAGE'
JustKernel cannot start: uv is missing.

uv is the tool that installs JustKernel's Python and its packages. Install it with this one
command in Terminal, then double-click start.command again:

    curl -LsSf https://astral.sh/uv/install.sh | sh

(With Homebrew, `brew install uv` works too.)
MESSAGE
  if [ -t 0 ]; then read -r -p "Press Enter to close this window. " _; fi
  exit 1
fi

echo "Starting the JustKernel demo; your browser opens the dashboard (Ctrl+C stops it)."
uv run justkernel demo --open "$@"
status=$?
if [ "$status" -ne 0 ] && [ -t 0 ]; then
  echo "The demo stopped with an error (exit $status); the lines above say why."
  read -r -p "Press Enter to close this window. " _
fi
exit "$status"
