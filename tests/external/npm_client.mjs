// Drive rea with the official TypeScript SDK (@modelcontextprotocol/sdk
// 1.32.x, protocol 2025-11-25): `rea mcp` over stdio, or `rea serve` over
// streamable HTTP when the first argument is its URL (the bearer token then
// comes from REA_TOKEN, so it is not on any command line).
//
// Usage: node npm_client.mjs REA_BINARY [SERVER ARGS...] < plan.json > results.json
//        REA_TOKEN=… node npm_client.mjs http://HOST:PORT/mcp < plan.json > results.json
// NODE_PATH must point at the node_modules folder holding the SDK.
// The plan is a list of steps; the results are their wire answers, so the
// Rust test that calls this script makes every assertion.

import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(process.env.NODE_PATH.replace(/\/?$/, "/") + "x.js");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const [binary, ...args] = process.argv.slice(2);
const steps = JSON.parse(readFileSync(0, "utf8"));

const client = new Client({ name: "rea-npm-test", version: "1.0.0" });
const transport = /^https?:\/\//.test(binary)
  ? new StreamableHTTPClientTransport(new URL(binary), {
      requestInit: { headers: { Authorization: `Bearer ${process.env.REA_TOKEN ?? ""}` } },
    })
  : new StdioClientTransport({ command: binary, args, stderr: "inherit" });
// The client hands the negotiated version to transports that want it.
let negotiated = null;
transport.setProtocolVersion = (version) => {
  negotiated = version;
};
await client.connect(transport);

const results = [];
for (const step of steps) {
  try {
    switch (step.op) {
      case "list_prompts":
        results.push(await client.listPrompts());
        break;
      case "list_tools":
        results.push(await client.listTools());
        break;
      case "get_prompt":
        results.push(await client.getPrompt({ name: step.name, arguments: step.arguments }));
        break;
      case "complete":
        results.push(
          await client.complete({
            ref: { type: "ref/prompt", name: step.prompt },
            argument: { name: step.argument, value: step.value },
            ...(step.context ? { context: { arguments: step.context } } : {}),
          }),
        );
        break;
      case "call":
        results.push(await client.callTool({ name: step.tool, arguments: step.arguments ?? {} }));
        break;
      default:
        throw new Error(`unknown op ${step.op}`);
    }
  } catch (e) {
    results.push({ error: { code: e.code ?? null, message: String(e.message ?? e) } });
  }
}
process.stdout.write(JSON.stringify({ protocol_version: negotiated, results }));
await client.close();
