# Sourced by scripts/demo.sh and scripts/test.sh: make .venv (Python 3.11+) and install into it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "agentos needs Python 3.11 or newer; set PYTHON=/path/to/python3.11+" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# llama-cpp-python compiles from source (about 4 minutes the first time; pip caches the wheel).
# GGML_NATIVE=OFF builds for any x86-64 CPU, so a cached wheel still runs on another machine.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"

install() {
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[$1]"
}
