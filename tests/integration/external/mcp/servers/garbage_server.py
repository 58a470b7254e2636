"""A fake MCP server: answers every line with garbage, then (optionally) exits.

``python garbage_server.py [lines]``: writes non-JSON-RPC text to stdout for each line it
reads, forever (or until stdin closes).
"""

import sys

sys.stdout.write("this is not json-rpc\n")
sys.stdout.write('{"jsonrpc": "2.0", "weird": true}\n')
sys.stdout.flush()
for _line in sys.stdin:
    sys.stdout.write("garbage " * 10 + "\n")
    sys.stdout.flush()
