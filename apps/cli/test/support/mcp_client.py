"""Drives `tablemere mcp` with the Python MCP SDK (PyPI `mcp`): starts the server as a child
process over stdio, lists its tools, makes the calls given, and prints one JSON object on stdout:
{"tools": {name: input_schema}, "calls": [{"is_error": bool, "text": str, "structured": dict or null}]}.

usage: mcp_client.py '<json: {"command", "args", "env", "cwd", "calls": [{"tool", "arguments"}]}>'
"""
import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client


async def main(plan):
    server = StdioServerParameters(command=plan["command"], args=plan["args"], env=plan["env"], cwd=plan["cwd"])
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name: tool.input_schema for tool in (await session.list_tools()).tools}
        calls = []
        for call in plan["calls"]:
            result = await session.call_tool(call["tool"], call["arguments"])
            calls.append({"is_error": bool(result.is_error), "text": "".join(block.text for block in result.content if block.type == "text"), "structured": result.structured_content})
    json.dump({"tools": tools, "calls": calls}, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
