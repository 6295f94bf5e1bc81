"""Drives dochub's MCP server with the official Python MCP SDK, for the end-to-end tests: `dochub
mcp` over stdio, or the app's `/mcp` over Streamable HTTP.

Usage: python client.py SCRIPT_JSON

SCRIPT_JSON is {"command": str, "args": [str], "env": {str: str}, "steps": [step]} for stdio, or
{"url": str, "steps": [step]} for Streamable HTTP. Each step is
one of:
  {"op": "list_tools"} | {"op": "call", "tool": str, "arguments": {...}}
  {"op": "list_resources"} | {"op": "read_resource", "uri": str}
  {"op": "http", "url": str}       GET a URL directly (the hub's state between MCP calls)
  {"op": "exec", "argv": [str]}    run a fixed program (the test drops the SSH link this way)
  {"op": "subscribe", "uri": str} | {"op": "unsubscribe", "uri": str}
  {"op": "updates", "count": int, "wait_ms": int}
                                   the URIs of every notifications/resources/updated so far,
                                   once there are `count` of them or `wait_ms` has passed
  {"op": "post_later", "url": str, "json": {...}, "delay_ms": int}
                                   POST JSON from a background thread after a delay (a send
                                   that arrives while a tool call waits)
Prints one JSON document: {"initialize": {...}, "steps": [{"ok": result} | {"error": str}, ...]},
each step with "ms", its wall-clock time. A failing step does not stop the script: the tests
check that the server keeps answering after errors.
"""

import asyncio
import json
import subprocess
import sys
import threading
import time
import urllib.request

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


UPDATES = []


async def on_message(message):
    """Collects notifications/resources/updated (whatever model the SDK wraps it in)."""
    message = getattr(message, "root", message)
    if getattr(message, "method", None) == "notifications/resources/updated":
        UPDATES.append(str(message.params.uri))


def dump(result):
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


async def step(session, s):
    op = s["op"]
    if op == "list_tools":
        return dump(await session.list_tools())
    if op == "call":
        return dump(await session.call_tool(s["tool"], s.get("arguments", {})))
    if op == "list_resources":
        return dump(await session.list_resources())
    if op == "read_resource":
        return dump(await session.read_resource(s["uri"]))
    if op == "http":
        with urllib.request.urlopen(s["url"], timeout=30) as r:
            return json.loads(r.read())
    if op == "subscribe":
        return dump(await session.subscribe_resource(s["uri"]))
    if op == "unsubscribe":
        return dump(await session.unsubscribe_resource(s["uri"]))
    if op == "updates":
        deadline = time.monotonic() + s["wait_ms"] / 1000
        while len(UPDATES) < s["count"] and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return list(UPDATES)
    if op == "post_later":
        def post():
            time.sleep(s["delay_ms"] / 1000)
            request = urllib.request.Request(
                s["url"],
                data=json.dumps(s["json"]).encode(),
                headers={"Content-Type": "application/json"},
            )
            urllib.request.urlopen(request, timeout=30).read()

        threading.Thread(target=post, daemon=True).start()
        return {"scheduled": True}
    if op == "exec":
        done = subprocess.run(s["argv"], capture_output=True, text=True, timeout=30)
        return {"status": done.returncode}
    raise ValueError(f"unknown op {op}")


async def run(read, write, script, out):
    async with ClientSession(read, write, message_handler=on_message) as session:
        out["initialize"] = dump(await session.initialize())
        for s in script["steps"]:
            start = time.perf_counter()
            try:
                entry = {"ok": await step(session, s)}
            except Exception as e:  # a protocol error is a result the test checks
                entry = {"error": f"{type(e).__name__}: {e}"}
            entry["ms"] = (time.perf_counter() - start) * 1000
            out["steps"].append(entry)


async def main(script):
    out = {"steps": []}
    if "url" in script:
        async with streamable_http_client(script["url"]) as streams:
            await run(streams[0], streams[1], script, out)
    else:
        params = StdioServerParameters(
            command=script["command"], args=script.get("args", []), env=script.get("env")
        )
        async with stdio_client(params) as (read, write):
            await run(read, write, script, out)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
