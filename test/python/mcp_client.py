"""A client on the official MCP Python SDK (`mcp`, installed by test/helpers/python.ts), driven by the tests.

    python mcp_client.py <url> <bearer token> <mode> <tool> <arguments as JSON>

Connects to the MCP endpoint at <url> with `Authorization: Bearer <token>` in `mode` ("auto": the SDK's own
choice, probing `server/discover` and falling back to `initialize`; "legacy": the 2025 handshake), lists the
tools and calls <tool>, then prints one JSON line: the negotiated revision, the server, the tool names and the
call's result (`is_error` and the text content).
"""

import asyncio
import json
import sys

from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation


async def main(url: str, token: str, mode: str, tool: str, arguments: dict) -> dict:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http:
        transport = streamable_http_client(url, http_client=http)
        client_info = Implementation(name="python-sdk-client", version="2.3.0")
        async with Client(transport, mode=mode, client_info=client_info) as client:
            tools = await client.list_tools()
            result = await client.call_tool(tool, arguments)
            return {
                "protocol_version": client.protocol_version,
                "server": client.server_info.name if client.server_info else None,
                "tools": [t.name for t in tools.tools],
                "is_error": bool(result.is_error),
                "text": [c.text for c in result.content if getattr(c, "type", None) == "text"],
            }


if __name__ == "__main__":
    url, token, mode, tool, arguments = sys.argv[1:6]
    print(json.dumps(asyncio.run(main(url, token, mode, tool, json.loads(arguments)))))
