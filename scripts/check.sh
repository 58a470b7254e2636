#!/usr/bin/env bash
# Lint, type-check and test: what CI runs after installing everything (.ci/run).
# Usage: bash scripts/check.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== ruff check"
ruff check .
echo "== ruff format --check"
ruff format --check .
echo "== mypy --strict"
mypy
echo "== pytest"
# Exit code 5 (no tests collected) is a failure here, like any other non-zero code.
python -m pytest "$@"
