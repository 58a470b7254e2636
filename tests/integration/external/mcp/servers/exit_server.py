"""A fake MCP server that exits at once with status 3, writing one line to stderr."""

import sys

sys.stderr.write("exit_server: refusing to start\n")
sys.exit(3)
