#!/usr/bin/env bash
# Set up the development install and run the whole suite: lint, types, layers, tests.
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
install dev
.venv/bin/ruff check src tests bench examples
.venv/bin/ruff format --check src tests bench examples
.venv/bin/mypy
# The layer and cycle contracts of [tool.importlinter] in pyproject.toml (DESIGN.md §3).
.venv/bin/lint-imports --no-logo
exec .venv/bin/pytest "$@"
