#!/usr/bin/env bash
# Set up the development install and run the whole suite: lint, types, tests.
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
install dev
.venv/bin/ruff check src tests bench examples
.venv/bin/ruff format --check src tests bench examples
.venv/bin/mypy
exec .venv/bin/pytest "$@"
