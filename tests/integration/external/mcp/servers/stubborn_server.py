"""A fake MCP server that ignores SIGTERM and stdin EOF, never answering anything."""

import signal
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    time.sleep(1)
