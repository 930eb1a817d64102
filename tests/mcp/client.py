"""Drives scrollback's MCP server with the official Python SDK (`mcp` on PyPI), for tests/mcp.rs.

Usage: client.py PLAN.json. The plan names the transport (stdio: a command and its environment;
http: a URL and headers) and the calls to make: `calls`, each made once, and `pages`, each repeated
with the previous answer's `next` until there is none. Prints one JSON report: the tools listed
(with whether each input schema is a valid JSON Schema), and every answer as the SDK parsed it.
"""

import asyncio
import json
import sys

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.shared.exceptions import MCPError


def answer(result):
    out = {"isError": bool(result.is_error), "text": "", "structured": result.structured_content, "images": []}
    texts = []
    for block in result.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "image":
            out["images"].append({"mime": block.mime_type, "data": block.data})
    out["text"] = "\n".join(texts)
    return out


async def call(session, tool, args):
    try:
        return answer(await session.call_tool(tool, args))
    except MCPError as e:
        return {"protocolError": str(e)}


async def run(session, plan):
    init = await session.initialize()
    report = {"server": init.server_info.name, "instructions": init.instructions, "tools": []}
    listed = await session.list_tools()
    for tool in listed.tools:
        try:
            jsonschema.validators.validator_for(tool.input_schema).check_schema(tool.input_schema)
            valid = True
        except jsonschema.SchemaError:
            valid = False
        report["tools"].append(
            {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema, "schemaValid": valid}
        )
    report["calls"] = [await call(session, c["tool"], c["args"]) for c in plan.get("calls", [])]
    report["pages"] = []
    for p in plan.get("pages", []):
        args = dict(p["args"])
        answers = []
        for _ in range(500):
            a = await call(session, p["tool"], args)
            answers.append(a)
            nxt = (a.get("structured") or {}).get("next")
            if a.get("isError") or nxt is None:
                break
            args[p["cursor"]] = nxt
        report["pages"].append(answers)
    return report


async def main():
    plan = json.load(open(sys.argv[1]))
    if plan["transport"] == "stdio":
        params = StdioServerParameters(command=plan["command"][0], args=plan["command"][1:], env=plan["env"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                report = await run(session, plan)
    else:
        client = create_mcp_http_client(headers=plan.get("headers") or {})
        async with client, streamable_http_client(plan["url"], http_client=client) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                report = await run(session, plan)
    json.dump(report, sys.stdout)


asyncio.run(main())
