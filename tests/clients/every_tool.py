"""Every silt tool through the official MCP Python SDK, as a client sees it.

Usage: every_tool.py SILT_BINARY HOME REPO

The environment must name a SearXNG-shaped server in SILT_SEARXNG_URL
for sieve_search (the Rust test starts a loopback fake).

Lists the tools, checks each input schema is portable (no null in a type,
no Rust-only format, a valid JSON Schema), validates each tool's example
arguments against its schema, calls the tool and checks the result is not
an error. Also sends a number as a numeric string, as some clients do.
Prints one JSON line: {"tools": N, "called": [...], "problems": [...]}.
Exits 1 when there is any problem.
"""

import asyncio
import json
import os
import sys

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

RUST_FORMATS = {"uint", "uint8", "uint16", "uint32", "uint64", "int8", "int16",
                "int32", "int64", "double"}


# the one usage object every sieve_* result carries
USAGE_FIELDS = ["tokens", "input_tokens", "output_tokens", "requests", "cache_hits",
                "cost_usd", "budget_exhausted"]


def examples(repo):
    """One documented call per tool, from tool_calls.json beside this file
    (the MCP Inspector test reads the same calls)."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "tool_calls.json")) as f:
        text = f.read().replace("$REPO", repo)
    return json.loads(text)["calls"]


def unportable(node, at="$"):
    """Where a schema uses what some clients cannot read."""
    found = []
    if isinstance(node, dict):
        t = node.get("type")
        if t == "null" or (isinstance(t, list) and "null" in t):
            found.append(f"{at}: null type")
        if node.get("format") in RUST_FORMATS:
            found.append(f"{at}: format {node['format']}")
        if "default" in node and node["default"] is None:
            found.append(f"{at}: default null")
        for k, v in node.items():
            found += unportable(v, f"{at}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found += unportable(v, f"{at}[{i}]")
    return found


async def main(binary, home, repo):
    env = dict(os.environ, SILT_LEDGER_PATH=f"{home}/ledger.db", SILT_CACHE_DIR=f"{home}/cache",
               SILT_CONFIG=f"{home}/silt.toml", SILT_SLEEP_PRESSURE="0")
    with open(f"{home}/silt.toml", "w") as f:
        f.write('judge = "lexical"\n')
    params = StdioServerParameters(command=binary, args=["serve"], env=env, cwd=repo)
    problems, called = [], []
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            tools = (await s.list_tools()).tools
            calls = examples(repo)
            for t in tools:
                schema = t.input_schema
                problems += [f"{t.name} {p}" for p in unportable(schema)]
                if t.output_schema is None:
                    problems.append(f"{t.name}: no output schema")
                else:
                    problems += [f"{t.name} output {p}" for p in unportable(t.output_schema)]
                    try:
                        jsonschema.Draft202012Validator.check_schema(t.output_schema)
                    except jsonschema.SchemaError as e:
                        problems.append(f"{t.name}: output schema invalid ({e.message})")
                try:
                    jsonschema.Draft202012Validator.check_schema(schema)
                except jsonschema.SchemaError as e:
                    problems.append(f"{t.name}: not a valid schema ({e.message})")
                if t.name not in calls:
                    continue
                args = calls[t.name]
                try:
                    jsonschema.validate(args, schema)
                except jsonschema.ValidationError as e:
                    problems.append(f"{t.name}: its example fails its schema ({e.message})")
                out = await s.call_tool(t.name, args)
                text = "".join(c.text for c in out.content if hasattr(c, "text"))
                if out.is_error:
                    problems.append(f"{t.name}: {text[:300]}")
                elif t.name.startswith("sieve_"):
                    usage = (out.structured_content or {}).get("usage") or {}
                    lacking = [f for f in USAGE_FIELDS if f not in usage]
                    if lacking:
                        problems.append(f"{t.name}: usage lacks {lacking}")
                called.append(t.name)
            # the tools that act on a lesson or an event: on ones made here
            async def ok(name, args):
                out = await s.call_tool(name, args)
                text = "".join(c.text for c in out.content if hasattr(c, "text"))
                if out.is_error:
                    problems.append(f"{name}: {text[:300]}")
                    return {}
                called.append(name)
                return out.structured_content or {}
            made = await ok("sediment_capture", {"when": "formatting the changelog",
                                                 "prefer": "keep one line per change"})
            lesson = (made.get("captured") or {}).get("id", "missing")
            await ok("sediment_confirm", {"id": lesson})
            await ok("sediment_contradict", {"id": lesson})
            await ok("sediment_forget", {"id": lesson, "reason": "a test lesson"})
            for _ in range(2):
                await ok("sediment_capture", {"when": "tagging a release build",
                                              "prefer": "sign the tag with the release key"})
            slept = await ok("sediment_sleep", {})
            steps = slept.get("undoable") or []
            if steps:
                await ok("sediment_undo", {"event": steps[0]["event"]})
            else:
                problems.append(f"sediment_sleep merged no duplicate to undo: {slept}")
            calls.update({n: {} for n in ["sediment_confirm", "sediment_contradict",
                                          "sediment_forget", "sediment_undo"]})
            missing = set(calls) - set(called)
            problems += [f"{m}: not listed" for m in sorted(missing)]
            # a client that sends numbers as strings
            out = await s.call_tool("sieve_grep", {"question": "retries", "path": repo,
                                                   "top_k": "3", "threshold": "0"})
            if out.is_error:
                problems.append("sieve_grep with top_k \"3\": " +
                                "".join(c.text for c in out.content if hasattr(c, "text"))[:300])
    print(json.dumps({"tools": len(tools), "called": called, "problems": problems}))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*sys.argv[1:4])))
