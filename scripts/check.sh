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
# The suite runs on every core (pytest-xdist; TOOLDECK_TEST_WORKERS=1 runs it in one process),
# then the tests marked `serial` run alone. Exit code 5 (no tests collected) is a failure for
# the main pass, like any other non-zero code; the serial pass may find none.
workers="${TOOLDECK_TEST_WORKERS:-auto}"
suite_started=$SECONDS
# Printed however the suite ends (a failing pass stops the script: set -e).
trap 'echo "== test suite wall time: $((SECONDS - suite_started)) s"' EXIT
echo "== pytest ($workers workers; then the serial tests alone)"
python -m pytest -n "$workers" --dist loadgroup -m "not serial" "$@"
echo "== pytest: serial tests"
status=0
python -m pytest -m serial "$@" || status=$?
if [ "$status" -ne 0 ] && [ "$status" -ne 5 ]; then
    exit "$status"
fi
