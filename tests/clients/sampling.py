"""The sampling judge through the official MCP Python SDK's sampling callback.

Usage: sampling.py stdio SILT_BINARY HOME
       sampling.py http URL TOKEN HOME
       sampling.py idle URL TOKEN   (connects with sampling, says "connected", waits)

The callback is a perfect model: it reads each numbered item of silt's
prompt and answers it from the labels below, so every answer silt reads
back is right. With it the script asks sieve_ask, sieve_verify and a
sediment_sleep over a small ledger (judge "sampling"); then the failure
cases: a client without the sampling capability, and callbacks that answer
prose, an error, a reply cut at maxTokens, or no reply in time. HOME holds notes.md, the
source the verify claims cite (the server's folder over stdio, one of its
roots over HTTP).

Prints one JSON line: what each case answered, and the requests the
callback saw (their maxTokens and model preferences).
"""

import asyncio
import json
import os
import re
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

FRUIT = {"apple": "yes", "pear": "yes", "hammer": "no", "wrench": "no"}

RHINE_TRUE = "The Rhine is about 1,230 kilometres long."
RHINE_FALSE = "The Rhine is about 300 kilometres long."
NOTES = ("The Rhine is about 1,230 kilometres long. It rises in the Swiss Alps "
         "and flows into the North Sea at Rotterdam.\n")

# (when, prefer) of each lesson captured, and how pairs of them relate
LESSONS = {
    "py4": ("indenting Python code", "use four spaces per indentation level"),
    "py4b": ("indenting Python source files", "indent each level with 4 spaces"),
    "tests": ("committing to the main branch", "run the full test suite first"),
    "notests": ("committing to the main branch", "skip the test suite to save time"),
    "tables": ("naming database tables", "use plural snake_case names"),
}
RELATIONS = {
    frozenset(["py4", "py4b"]): "A",      # merge: the same lesson twice
    frozenset(["tests", "notests"]): "B",  # contradict
}


def lesson_of(when, prefer):
    for key, (w, p) in LESSONS.items():
        if w == when.strip() and p == prefer.strip():
            return key
    raise ValueError(f"unknown lesson {when!r} -> {prefer!r}")


def parse(user):
    """The options (letter -> text) and the numbered items of a prompt."""
    options = dict(re.findall(r"^([A-Z])\. (.*)$", user.split("Items:")[0], re.M))
    items = re.findall(r'Item (\d+):\n"""\n(.*?)\n"""', user, re.S)
    return options, [(int(n), text) for n, text in items]


def right_letter(options, item):
    """What a perfect model answers for one item."""
    pair = re.match(r"First: WHEN (.*) -> PREFER (.*)\nSecond: WHEN (.*) -> PREFER (.*)", item)
    if pair:
        a, b = lesson_of(pair[1], pair[2]), lesson_of(pair[3], pair[4])
        return RELATIONS.get(frozenset([a, b]), "D")
    if item in FRUIT:
        return "A" if FRUIT[item] == "yes" else "B"
    # a verify passage: the claim sits in the supports_fully option
    letter = {text.split(":")[0]: k for k, text in options.items()}
    claim = options[letter["supports_fully"]].split("says: ", 1)[1]
    if "Rhine" not in item:
        return letter["does_not_address"]
    return letter["supports_fully"] if claim in item else letter["contradicts"]


SEEN = []


def perfect(mode="right"):
    async def callback(context, params):
        SEEN.append({
            "max_tokens": params.max_tokens,
            "hints": [h.name for h in (params.model_preferences.hints or [])],
            "speed": params.model_preferences.speed_priority,
            "cost": params.model_preferences.cost_priority,
            "intelligence": params.model_preferences.intelligence_priority,
            "system": bool(params.system_prompt),
        })
        if mode == "error":
            return types.ErrorData(code=-1, message="the user declined this sampling request")
        if mode == "slow":
            # past the server's SILT_SAMPLING_TIMEOUT_MS (3 s in the tests)
            await asyncio.sleep(6)
        user = params.messages[0].content.text
        options, items = parse(user)
        if mode == "garbage":
            text = "I would say the first one, probably."
        else:
            answer = {}
            for n, item in items:
                right = right_letter(options, item)
                answer[str(n)] = {k: (1.0 if k == right else 0.0) for k in options}
            text = "```json\n" + json.dumps(answer) + "\n```"
        stop = "maxTokens" if mode == "maxtokens" else "endTurn"
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=text),
            model="perfect-labels", stop_reason=stop)
    return callback


def outcome(result):
    if result.is_error:
        return {"error": result.content[0].text}
    return {"ok": result.structured_content}


ASK = {"question": "Is this a fruit?", "kind": "judge", "yes": "It is a fruit",
       "no": "It is not a fruit", "items": list(FRUIT), "judge": "sampling",
       "top_k": 10, "threshold": 0.0}


async def scenarios(connect, home, http):
    report = {}
    async with connect() as (r, w):
        async with ClientSession(r, w, sampling_callback=perfect()) as s:
            await s.initialize()
            report["ask"] = outcome(await s.call_tool("sieve_ask", ASK))
            # at the stated price (SILT_SAMPLING_PRICE_IN) a tiny budget
            # asks nothing
            report["budget"] = outcome(await s.call_tool("sieve_ask", dict(ASK, budget_usd=0.00001)))
            verify = {"judge": "sampling", "records": [
                {"claim": c, "kind": "fact", "citations": [{"locator": "notes.md"}]}
                for c in (RHINE_TRUE, RHINE_FALSE)]}
            if http:
                verify["base_path"] = home
            report["verify"] = outcome(await s.call_tool("sieve_verify", verify))
            for when, prefer in LESSONS.values():
                captured = outcome(await s.call_tool(
                    "sediment_capture", {"when": when, "prefer": prefer, "feedback": "positive"}))
                if "error" in captured:
                    report["capture"] = captured
            report["sleep"] = outcome(await s.call_tool("sediment_sleep", {"judge": "sampling"}))
    async with connect() as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            report["no_sampling"] = outcome(await s.call_tool("sieve_ask", ASK))
    for mode in ("garbage", "error", "maxtokens", "slow"):
        async with connect() as (r, w):
            async with ClientSession(r, w, sampling_callback=perfect(mode)) as s:
                await s.initialize()
                report[mode] = outcome(await s.call_tool("sieve_ask", ASK))
    report["seen"] = SEEN
    return report


def stdio(binary, home):
    env = dict(os.environ, SILT_LEDGER_PATH=f"{home}/ledger.db", SILT_CACHE_DIR=f"{home}/cache",
               SILT_CONFIG=f"{home}/silt.toml", SILT_SLEEP_PRESSURE="0",
               SILT_LEDGER_EMBEDDER="none", SILT_SAMPLING_TIMEOUT_MS="3000",
               SILT_SAMPLING_PRICE_IN="100", SILT_SAMPLING_PRICE_OUT="100")
    params = StdioServerParameters(command=binary, args=["serve"], env=env, cwd=home)
    return lambda: stdio_client(params)


def http(url, token):
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    class Connect:
        async def __aenter__(self):
            self.client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
            await self.client.__aenter__()
            self.stream = streamable_http_client(url, http_client=self.client)
            r, w, *_ = await self.stream.__aenter__()
            return r, w

        async def __aexit__(self, *exc):
            await self.stream.__aexit__(*exc)
            await self.client.__aexit__(*exc)

    return Connect


async def idle(connect):
    async with connect() as (r, w):
        async with ClientSession(r, w, sampling_callback=perfect()) as s:
            await s.initialize()
            print("connected", flush=True)
            await asyncio.sleep(600)


def main():
    if sys.argv[1] == "idle":
        asyncio.run(idle(http(sys.argv[2], sys.argv[3])))
        return
    if sys.argv[1] == "stdio":
        binary, home = sys.argv[2], sys.argv[3]
        connect, is_http = stdio(binary, home), False
        with open(f"{home}/silt.toml", "w") as f:
            f.write('judge = "lexical"\n')
    else:
        url, token, home = sys.argv[2], sys.argv[3], sys.argv[4]
        connect, is_http = http(url, token), True
    with open(f"{home}/notes.md", "w") as f:
        f.write(NOTES)
    report = asyncio.run(scenarios(connect, home, is_http))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
