"""``python -m orchestrator "question"``; see `orchestrator.cli` for flags and exit codes."""

from orchestrator.cli import run_main

if __name__ == "__main__":
    run_main()
