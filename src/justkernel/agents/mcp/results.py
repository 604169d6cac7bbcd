"""What a team gets back from an MCP tool: untrusted text, capped, never anything else.

An interceptor of the adapters' (outermost around every call): the server's content blocks
become one text (text and embedded text resources; an image, audio or a link is named, not
passed), cut at the server's `max_result_chars`; structured content is dropped (the text
carries the result). A failed call (the server would not start, crashed, timed out) is an
error result the team reads, not an exception that ends its turn; its words are scrubbed of
secrets and clipped, since a transport error may quote a header or the command line.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from langchain_mcp_adapters.interceptors import MCPToolCallRequest, MCPToolCallResult
from mcp.types import CallToolResult, ContentBlock, EmbeddedResource, TextContent

from justkernel.settings.redaction import scrub

ERROR_CHARS = 500
Handler = Callable[[MCPToolCallRequest], Awaitable[MCPToolCallResult]]


def block_text(block: ContentBlock) -> str:
    """One content block as text; what is not text is named only."""
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, EmbeddedResource):
        text = getattr(block.resource, "text", None)
        if isinstance(text, str):
            return text
    return f"[{block.type} content not shown]"


def capped_text(blocks: list[ContentBlock], limit: int) -> str:
    text = "\n".join(block_text(b) for b in blocks).replace("\x00", "")
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    return f"{text[:limit]}\n[{cut} more characters cut: MCP results are capped at {limit}]"


def _text_result(text: str, *, error: bool) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], isError=error)


def failure_text(exc: BaseException) -> str:
    """The words of a failure; an ExceptionGroup (anyio's task groups) by its first leaf."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return scrub(f"{type(exc).__name__}: {exc}")[:ERROR_CHARS]


class UntrustedResults:
    """The interceptor for one server: `limit` characters at most reach the team."""

    def __init__(self, server: str, limit: int) -> None:
        self.server = server
        self.limit = limit

    async def __call__(self, request: MCPToolCallRequest, handler: Handler) -> CallToolResult:
        try:
            result = await handler(request)
        except Exception as exc:  # the server's failure is the tool's answer
            return _text_result(
                f"the MCP server {self.server!r} failed: {failure_text(exc)}", error=True
            )
        if not isinstance(result, CallToolResult):  # only an interceptor returns others
            return _text_result("the MCP tool returned no result", error=True)
        return _text_result(capped_text(result.content, self.limit), error=result.isError)
