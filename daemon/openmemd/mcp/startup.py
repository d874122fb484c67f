"""The session's startup context for MCP hosts that load it when a session starts: the prompt
`memory_startup_context` and the resource `memory://startup-context`, both the block the
`memory_context` tool returns as `text` (USER.md, MEMORY.md and today's and yesterday's notes
within their budgets, wrapped as untrusted data). A host that can neither is served by the
tool, or by `openmemd context` in a start-up hook.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from openmemd.errors import OpenmemdError
from openmemd.protocol.replies import ContextReply, Reply, expect
from openmemd.protocol.requests import ContextRequest, Request

PROMPT = "memory_startup_context"
RESOURCE_URI = "memory://startup-context"
_DESCRIPTION = ("The user's memory for the start of a session: USER.md, MEMORY.md and the "
                "daily notes of today and yesterday, within their budgets, marked as data, "
                "not instructions.")


def startup_text(reply: ContextReply) -> str:
    """The block, or one line saying there is nothing to load (a prompt is never empty)."""
    return reply.text or ("[Startup context: the user has no memory files yet (no USER.md or "
                          f"MEMORY.md, no notes of {' or '.join(reply.days)}).]\n")


def hooks(handler: Callable[[Request], Reply], agent: str) -> dict[str, Any]:
    """The low-level Server's prompt and resource handlers (keyword arguments of `Server`)."""

    async def context() -> str:
        try:
            reply = await anyio.to_thread.run_sync(handler, ContextRequest(agent=agent),
                                                   abandon_on_cancel=True)
        except OpenmemdError as exc:  # a missing workspace, a daemon gone: one clear line
            raise MCPError(code=types.INTERNAL_ERROR, message=str(exc)) from None
        return startup_text(expect(reply, ContextReply))

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=PROMPT, title="Memory: startup context", description=_DESCRIPTION,
            arguments=[])])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams
                         ) -> types.GetPromptResult:
        if params.name != PROMPT:
            raise MCPError(code=types.INVALID_PARAMS,
                           message=f"Unknown prompt {params.name[:64]!r}: this server has "
                                   f"{PROMPT}")
        return types.GetPromptResult(description=_DESCRIPTION, messages=[types.PromptMessage(
            role="user", content=types.TextContent(text=await context()))])

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource(
            name="startup-context", title="Memory: startup context", uri=RESOURCE_URI,
            description=_DESCRIPTION, mime_type="text/plain")])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams
                            ) -> types.ReadResourceResult:
        if params.uri != RESOURCE_URI:
            raise MCPError(code=types.INVALID_PARAMS,
                           message=f"Unknown resource {params.uri[:200]!r}: this server has "
                                   f"{RESOURCE_URI}")
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=RESOURCE_URI, mime_type="text/plain", text=await context())])

    return {"on_list_prompts": list_prompts, "on_get_prompt": get_prompt,
            "on_list_resources": list_resources, "on_read_resource": read_resource}
