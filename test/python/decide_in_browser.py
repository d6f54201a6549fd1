"""A person's client on the official MCP Python SDK (`mcp`, installed by test/helpers/python.ts) asking for an action
that waits for that person's decision, driven by test/org/mcp-real-clients.test.ts.

    python decide_in_browser.py <url> <bearer token> <tool> <arguments as JSON>

Connects in the SDK's `auto` mode (2026-07-28 where the server offers it) with an elicitation callback, so the
client declares URL-mode elicitation. When the server answers the call with an `input_required` result asking to
open a URL, the SDK's own multi-round-trip driver hands that request to the callback, which prints
`{"open": <url>}` and waits for one line on stdin: the person has been to the page. The callback accepts, the SDK
retries the call with the echoed `requestState`, and the script prints the final answer as one JSON line.

The SDK (2.3.0) has no client support for the Tasks extension, so this is the input-request path, not a task.
"""

import asyncio
import json
import sys

import anyio
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import ElicitResult, Implementation


async def main(url: str, token: str, tool: str, arguments: dict) -> dict:
    asked: list[str] = []

    async def on_elicitation(context, params):
        if getattr(params, "mode", None) != "url":
            return ElicitResult(action="decline")
        asked.append(params.url)
        print(json.dumps({"open": params.url}), flush=True)
        # The person opens the page in their browser; the test says when they are back.
        await anyio.to_thread.run_sync(sys.stdin.readline)
        return ElicitResult(action="accept")

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http:
        transport = streamable_http_client(url, http_client=http)
        client_info = Implementation(name="python-person-client", version="2.3.0")
        async with Client(transport, mode="auto", client_info=client_info, elicitation_callback=on_elicitation) as client:
            result = await client.call_tool(tool, arguments)
            return {
                "protocol_version": client.protocol_version,
                "asked": asked,
                "is_error": bool(result.is_error),
                "structured": result.structured_content,
            }


if __name__ == "__main__":
    url, token, tool, arguments = sys.argv[1:5]
    print(json.dumps(asyncio.run(main(url, token, tool, json.loads(arguments)))), flush=True)
