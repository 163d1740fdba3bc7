#!/usr/bin/env python3
"""Drive `rea serve` over streamable HTTP with the official Python MCP SDK.

Usage: python_http_client.py URL < plan.json > results.json
       python_http_client.py --reload URL < plan.json > result.json

The plan is {"clients": [{"token": ..., "mode": "legacy"|"modern",
"steps": [...]}, ...]}. Every client runs at the same time, each with its
own `Authorization: Bearer` header: `legacy` is a ClientSession over
`streamable_http_client` (initialize, Mcp-Session-Id), `modern` is a Client
in auto mode (2026-07-28, one request at a time). Steps are those of
python_client.py; the results are their wire answers, per client, so the
Rust test makes every assertion. With --reload, python_client.py's reload
plan runs with both of its clients over HTTP.
"""

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from mcp import ClientSession  # noqa: E402
from mcp.client.client import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402
from python_client import reload, run_steps  # noqa: E402


def transport(url, token):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return streamable_http_client(url, http_client=http)


async def legacy(url, token, steps):
    async with transport(url, token) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            return {"protocol_version": init.protocol_version, "results": await run_steps(session, steps)}


async def modern(url, token, steps):
    async with Client(transport(url, token), mode="auto") as client:
        return {"protocol_version": client.protocol_version, "results": await run_steps(client, steps)}


async def run(url, plan):
    runners = {"legacy": legacy, "modern": modern}
    return await asyncio.gather(
        *(runners[c["mode"]](url, c["token"], c["steps"]) for c in plan["clients"])
    )


def main():
    plan = json.load(sys.stdin)
    if sys.argv[1] == "--reload":
        # python_client.py's reload, both clients over HTTP with plan["token"].
        url = sys.argv[2]
        result = asyncio.run(reload(lambda: transport(url, plan["token"]), plan))
    else:
        result = asyncio.run(run(sys.argv[1], plan))
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
