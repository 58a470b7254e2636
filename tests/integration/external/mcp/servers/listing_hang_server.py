"""A fake MCP server that completes the handshake, then never answers a request.

It starts fine (so a connection is made) and hangs on ``tools/list`` and every later
request, like a server stuck loading its tools.
"""

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "listing-hang", "version": "1.0.0"},
        }
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
