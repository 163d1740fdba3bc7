#!/usr/bin/env python3
"""Drive `rea mcp` over stdio with the official Python MCP SDK (`mcp` 2.3.x).

Usage: python_client.py MODE REA_BINARY [SERVER ARGS...] < plan.json > results.json

MODE is `legacy` (ClientSession, initialize handshake), `modern` (Client in
auto mode, which negotiates 2026-07-28 with a dual-era server) or `reload`
(two modern clients on one prompts directory: one subscribed to prompt
changes, one not). The plan is a list of steps; the results are their wire
answers, so the Rust test that calls this script makes every assertion. A
string "$N.path.to.field" in a step is replaced by that field of step N's
answer (ids the server returned earlier in the same plan).
"""

import asyncio
import json
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.client import Client
from mcp.client.stdio import stdio_client


def wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def resolve(value, results):
    """Replace every string "$N.a.b.0.c" in a step with that part of the
    wire answer of step N, so a plan can use ids the server returned."""
    if isinstance(value, str) and value.startswith("$") and value[1:2].isdigit():
        index, *path = value[1:].split(".")
        found = results[int(index)]
        for part in path:
            found = found[int(part)] if isinstance(found, list) else found[part]
        return found
    if isinstance(value, dict):
        return {k: resolve(v, results) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, results) for v in value]
    return value


async def run_steps(api, steps):
    results = []
    for step in steps:
        step = resolve(step, results)
        op = step["op"]
        try:
            if op == "list_prompts":
                results.append(wire(await api.list_prompts()))
            elif op == "list_tools":
                results.append(wire(await api.list_tools()))
            elif op == "get_prompt":
                results.append(wire(await api.get_prompt(step["name"], step.get("arguments"))))
            elif op == "complete":
                ref = types.PromptReference(type="ref/prompt", name=step["prompt"])
                argument = {"name": step["argument"], "value": step["value"]}
                results.append(wire(await api.complete(ref, argument, step.get("context"))))
            elif op == "call":
                results.append(wire(await api.call_tool(step["tool"], step.get("arguments", {}))))
            else:
                raise ValueError(f"unknown op {op}")
        except Exception as e:  # an MCP error is a result to assert on
            error = getattr(e, "error", None)
            results.append({"error": {"code": getattr(error, "code", None), "message": str(e)}})
    return results


async def legacy(params, steps):
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            return {"protocol_version": init.protocol_version, "results": await run_steps(session, steps)}


async def modern(params, steps):
    async with Client(params, mode="auto") as client:
        return {"protocol_version": client.protocol_version, "results": await run_steps(client, steps)}


async def reload(make, plan):
    """Edit a prompt file while one modern client listens for prompt changes
    and another (not subscribed) counts every notification it receives.
    `make()` gives what a Client connects to (each client its own)."""
    unsolicited = []

    async def count(message):
        if isinstance(message, types.ServerNotification) or not isinstance(message, Exception):
            unsolicited.append(type(message).__name__)

    edit = plan["edit"]
    async with Client(make(), mode="auto") as subscribed, Client(make(), mode="auto", message_handler=count) as quiet:
        await quiet.list_prompts()
        before = wire(await subscribed.list_prompts())
        async with subscribed.listen(prompts_list_changed=True) as subscription:
            path = Path(edit["file"])
            path.write_text(path.read_text().replace(edit["from"], edit["to"], 1))
            event = await asyncio.wait_for(subscription.__anext__(), timeout=20)
        await asyncio.sleep(plan.get("quiet_seconds", 2))
        after = wire(await subscribed.list_prompts(cache_mode="refresh"))
        return {
            "protocol_version": subscribed.protocol_version,
            "event": type(event).__name__,
            "unsolicited": unsolicited,
            "before": before,
            "after": after,
        }


def main():
    mode, binary, *server_args = sys.argv[1:]
    plan = json.load(sys.stdin)
    params = StdioServerParameters(command=binary, args=server_args)
    if mode == "reload":
        result = asyncio.run(reload(lambda: params, plan))
    else:
        runner = {"legacy": legacy, "modern": modern}[mode]
        result = asyncio.run(runner(params, plan))
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
