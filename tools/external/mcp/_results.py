"""Turning an MCP ``CallToolResult`` into envelope data, or into the error the model sees."""

from __future__ import annotations

from typing import Any

import mcp_types

from tools.errors import ToolError
from tools.external.mcp._connect import clip

#: Longest text a single result may carry into the envelope; the rest is cut with a note.
MAX_RESULT_CHARS = 1_000_000


def result_data(result: mcp_types.CallToolResult, *, tool: str) -> Any:
    """The envelope ``data`` for a call result, or raise the server's error for the model.

    ``structuredContent`` is preferred when present; otherwise text blocks are joined with
    newlines and other blocks (images, audio, resources) are summarised in one line each,
    never inlined as base64. Text beyond :data:`MAX_RESULT_CHARS` is cut with a note.

    Raises:
        ToolError: ``isError`` was set; the message is the server's text (cut to a bounded
            length), which is what the model needs to correct its call.
    """
    if result.is_error:
        text = render_content(result.content, limit=4_000).strip()
        raise ToolError(text or f"The MCP tool {tool!r} failed without saying why.")
    if result.structured_content is not None:
        return result.structured_content
    return render_content(result.content, limit=MAX_RESULT_CHARS)


def render_content(blocks: list[mcp_types.ContentBlock], *, limit: int) -> str:
    """Text for a list of content blocks: text as is, binary blocks summarised."""
    return clip("\n".join(_render_block(block) for block in blocks), limit)


def _render_block(block: mcp_types.ContentBlock) -> str:
    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
        return f"[{block.type}: {block.mime_type}, {_decoded_size(block.data)} bytes]"
    if isinstance(block, mcp_types.ResourceLink):
        title = f" ({block.name})" if block.name else ""
        return f"[resource link: {block.uri}{title}]"
    resource = block.resource
    if isinstance(resource, mcp_types.TextResourceContents):
        return f"[resource {resource.uri}]\n{resource.text}"
    mime = resource.mime_type or "application/octet-stream"
    return f"[resource {resource.uri}: {mime}, {_decoded_size(resource.blob)} bytes]"


def _decoded_size(data: str) -> int:
    """Approximate bytes in a base64 payload, without decoding it."""
    return len(data.strip().rstrip("=")) * 3 // 4
