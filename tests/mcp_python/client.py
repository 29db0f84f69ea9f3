"""kirocrew's MCP server driven by the official MCP Python SDK (PyPI `mcp`).

Run by `tests/api/mcp_python.rs` against a real daemon, once over Streamable
HTTP and once over stdio (`kirocrew mcp`), with the questions a user asks.
Prints one line per check and a closing `N passed, N failed`; exits 1 when a
check failed.

    client.py http URL TOKEN
    client.py stdio KIROCREW_BINARY HOME
"""

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

PASSED = 0
FAILED = 0


def check(name, ok, detail=""):
    global PASSED, FAILED
    if ok:
        PASSED += 1
        print(f"ok   {name}")
    else:
        FAILED += 1
        print(f"FAIL {name}: {detail}")


def field(obj, snake, camel):
    """A result field: the SDK's 2.x names are snake_case, 1.x camelCase."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def body(result):
    """The structured content of a tool result (or its text as JSON)."""
    structured = field(result, "structured_content", "structuredContent")
    if structured is not None:
        return structured
    for block in result.content:
        text = getattr(block, "text", None)
        if text:
            return json.loads(text)
    return None


async def call(session, tool, arguments):
    result = await session.call_tool(tool, arguments)
    return result, body(result)


async def exercise(session, transport):
    init = await session.initialize()
    server = field(init, "server_info", "serverInfo")
    check(f"{transport}: server is kirocrew", server.name == "kirocrew", server)

    tools = await session.list_tools()
    names = sorted(t.name for t in tools.tools)
    expected = [
        "context_preview", "episode_add", "learn_add", "learn_list", "learn_remove",
        "memory_forget", "memory_remember", "memory_search", "skill_read", "skill_search",
    ]
    check(f"{transport}: every tool listed", names == expected, names)

    r, b = await call(session, "memory_remember",
                      {"key": "pref.editor", "value": "helix", "confidence": 0.95})
    check(f"{transport}: memory_remember", not field(r, 'is_error', 'isError'), b)

    r, b = await call(session, "episode_add", {
        "text": "We moved the deploy window to Thursday at 14:00 because of the Lisbon offsite.",
        "importance": 0.8, "tags": ["deploy"]})
    check(f"{transport}: episode_add", not field(r, 'is_error', 'isError'), b)

    r, b = await call(session, "learn_add", {
        "rule": "Run the database migrations before restarting the API servers",
        "category": "tool"})
    check(f"{transport}: learn_add", not field(r, 'is_error', 'isError'), b)
    r, b = await call(session, "learn_list", {})
    lessons = json.dumps(b)
    check(f"{transport}: learn_list holds the lesson", "migrations" in lessons, lessons[:300])
    r, b = await call(session, "learn_add", {
        "rule": "Always page the on-call before a Friday deploy", "category": "preference"})
    check(f"{transport}: learn_add (to remove)", not field(r, 'is_error', 'isError'), b)
    key = b.get("key") if isinstance(b, dict) else None
    r, b = await call(session, "learn_remove", {"key": key})
    check(f"{transport}: learn_remove", not field(r, 'is_error', 'isError') and b.get("deleted") == key, b)

    # Ordinary questions (issue 35: an irregular verb after another word
    # made an FTS5 syntax error, answered 503 index_unavailable).
    for question in [
        "which editor does the user prefer",
        "editor does",
        "the deploy does work",
        "when is the deploy window?",
        "what did we decide about the Lisbon offsite?",
    ]:
        r, b = await call(session, "memory_search", {"query": question})
        check(f"{transport}: memory_search {question!r}", not field(r, 'is_error', 'isError'), b)
    r, b = await call(session, "memory_search", {"query": "which editor does the user prefer"})
    top = (b or {}).get("results", [{}])[0].get("id") if not field(r, 'is_error', 'isError') else None
    check(f"{transport}: the editor question finds pref.editor first", top == "pref.editor", b)
    r, b = await call(session, "memory_search", {"query": "when is the deploy window?"})
    texts = json.dumps(b)
    check(f"{transport}: the deploy question finds the episode", "Thursday" in texts, texts[:300])

    r, b = await call(session, "skill_search", {"query": "checks before a deploy"})
    check(f"{transport}: skill_search finds deploy-check", "deploy-check" in json.dumps(b), b)
    r, b = await call(session, "skill_read", {"name": "deploy-check"})
    check(f"{transport}: skill_read", not field(r, 'is_error', 'isError') and "smoke tests" in json.dumps(b), b)

    r, b = await call(session, "context_preview",
                      {"message": "which editor should I open the file in?"})
    context = (b or {}).get("context", "")
    check(f"{transport}: context_preview carries the preference", "helix" in context, context[:300])

    r, b = await call(session, "memory_forget", {"key": "pref.editor"})
    check(f"{transport}: memory_forget", not field(r, 'is_error', 'isError'), b)

    # Bad input is a tool error with a stable code, never a crash.
    r, b = await call(session, "memory_search", {"query": "   "})
    code = ((b or {}).get("error") or {}).get("code")
    check(f"{transport}: a blank query is empty_query", field(r, 'is_error', 'isError') and code == "empty_query", b)
    r, b = await call(session, "memory_remember", {"key": "pref.x"})
    check(f"{transport}: a missing argument is a tool error", field(r, 'is_error', 'isError'), b)


async def over_http(url, token):
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with client:
        async with streamable_http_client(url, http_client=client) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await exercise(session, "http")


async def over_stdio(binary, home):
    params = StdioServerParameters(command=binary, args=["--home", home, "mcp"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session, "stdio")


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "http" and len(sys.argv) == 4:
        anyio.run(over_http, sys.argv[2], sys.argv[3])
    elif mode == "stdio" and len(sys.argv) == 4:
        anyio.run(over_stdio, sys.argv[2], sys.argv[3])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    print(f"{PASSED} passed, {FAILED} failed")
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
