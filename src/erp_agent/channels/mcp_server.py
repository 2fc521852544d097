"""The MCP server (official ``mcp`` SDK): the gateway as an MCP client's model sees it.

Tools are the user's permitted tools, routed like the loop's: the spine plus ``tools.search``,
whose hits join the list (a ``tools/list_changed`` tells the client). Every call goes through
``Gateway.call`` and the shared result shaper; a large result stays on the server as a resource
(``erp-agent://results/<id>``, owner only) with one page and an exact summary in the reply.

A write returns a proposal, never a write. Only the human can confirm it: through MCP
elicitation when the client supports it (the exact document or diff is shown and the user
answers; an agent cannot answer for them), otherwise with a link to confirm it in the web app.
There is no tool that confirms. Only a question this server asked can be answered: its
``requestState`` is sealed and bound to the session, the call and the proposal
(``channels.elicitation``); any other state is ignored. A write whose values the text of
content read in the session mentions carries a warning, and the question asks the user to
acknowledge it (``gateway.origin``).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS, INVALID_REQUEST
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from erp_agent.calls.outcome import Outcome, ProposalView, Status, without_hash
from erp_agent.calls.session import Session
from erp_agent.channels.elicitation import Asked, Elicitations, call_digest
from erp_agent.channels.faults import in_words
from erp_agent.channels.markdown import block_markdown, figure_links, proposal_markdown
from erp_agent.channels.mcp_about import INSTRUCTIONS, NAME, VERSION
from erp_agent.engine.routing import SPINE
from erp_agent.errors import ChannelError
from erp_agent.gateway.origin import Read, WriteOrigin, read_of
from erp_agent.results.blocks import proposal_block
from erp_agent.results.render import materialise
from erp_agent.results.shaping import Shaped
from erp_agent.runtime import Runtime

SessionSource = Callable[[ServerRequestContext[Any, Any]], Awaitable[Session]]
RESULT_URI = "erp-agent://results/"
CONFIRM = "confirm"
ACKNOWLEDGE = "acknowledge_warning"
READS_KEPT = 20  # results per session the write-origin check looks back on
log = logging.getLogger(__name__)
# The loop's spine and the general tools beside it (but export, which writes a file on the
# server for the web app to offer: an MCP client reads a whole result as a resource).
MCP_TOOLS = tuple(
    dict.fromkeys(
        [*SPINE, "calculator.evaluate", "display.cards", "knowledge.search", "records.search",
         "workflow.describe", "workflow.pending", "results.page"]
    )
)  # fmt: skip


class McpChannel:
    def __init__(self, runtime: Runtime, sessions: SessionSource, web_url: str = "") -> None:
        self.runtime = runtime
        self.sessions = sessions
        self.web_url = web_url
        self._offered: dict[str, set[str]] = {}  # session id → tools found with tools.search
        # Content each session read lately: a write whose values its text mentions is flagged.
        self._reads: dict[str, deque[tuple[float, Read]]] = {}
        key = runtime.settings.session_key
        self.elicitations = Elicitations(key.get_secret_value() if key else None)
        self.server: Server[Any] = Server(
            NAME,
            version=VERSION,
            instructions=INSTRUCTIONS,
            # Failures reach the client as JSON-RPC errors in words (channels.faults).
            on_list_tools=in_words(self._list_tools),
            on_call_tool=in_words(self._call_tool),
            on_list_resources=in_words(self._list_resources),
            on_read_resource=in_words(self._read_resource),
        )

    # ------------------------------------------------------------ tools

    def offered(self, session: Session) -> list[str]:
        names = [*MCP_TOOLS, *sorted(self._offered.get(session.id, ()))]
        return [n for n in dict.fromkeys(names) if n in session.allowed_tools]

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        session = await self.runtime.gateway.within_plan(await self._session(ctx))
        tools = []
        for name in self.offered(session):
            tool = self.runtime.registry.get(name)
            if tool is not None:
                tools.append(
                    types.Tool(
                        name=tool.name, description=tool.description, input_schema=tool.parameters
                    )
                )
        return types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        session = await self._session(ctx)
        call = call_digest(params.name, params.arguments)
        if params.request_state is not None:
            now = self.runtime.gateway.clock()
            asked = self.elicitations.open(params.request_state, session, call, now)
            if asked is not None:
                return await self._decided(session, asked, params)
            # Not a question this server asked in this session for this call: it confirms
            # nothing, and the call is answered as if it carried no state.
            log.warning("ignored a requestState that is not ours (tool %s)", params.name)
        args = params.arguments or {}
        outcome = await self.runtime.gateway.call(
            session, params.name, args, origin=self._origin(session)
        )
        self._remember(session, params.name, args, outcome)
        if outcome.status is Status.REFUSED:
            # Not the user's tool (or none such): the protocol's own error, in words.
            raise MCPError(INVALID_PARAMS, outcome.message)
        shaped = await self.runtime.shaper.shape(session, outcome)
        if outcome.status is Status.PROPOSAL and outcome.proposal:
            return await self._proposal(ctx, session, outcome.proposal, call)
        if shaped.offer:
            found = self._offered.setdefault(session.id, set())
            if not set(shaped.offer) <= found:
                found.update(shaped.offer)
                await _tools_changed(ctx)
        return await self._result(session, outcome, shaped)

    async def _result(
        self, session: Session, outcome: Outcome, shaped: Shaped
    ) -> types.CallToolResult:
        content: list[types.ContentBlock] = [
            types.TextContent(type="text", text=json.dumps(shaped.content, default=str))
        ]
        for block in shaped.blocks:
            shown = await materialise(
                block, self.runtime.results, session.user, self.runtime.links.document,
                self.runtime.catalog,
            )  # fmt: skip
            text = block_markdown(shown, web_url=self.web_url)
            if text:
                content.append(types.TextContent(type="text", text=text))
        # Every figure of a metric's answer opens its documents in the web app, for its owner.
        linked = figure_links(shaped.result_id, shaped.data, self.web_url)
        if linked:
            content.append(types.TextContent(type="text", text=linked))
        if shaped.result_id and "page" in shaped.content:
            # Too large to send whole: the rest stays on the server, readable as a resource.
            content.append(
                types.ResourceLink(
                    type="resource_link",
                    uri=RESULT_URI + shaped.result_id,
                    name=shaped.result_id,
                    mime_type="application/json",
                    description=f"The whole result of {outcome.tool}",
                )
            )
        ok = outcome.status in (Status.OK, Status.PROPOSAL)
        return types.CallToolResult(
            content=content,
            structured_content=shaped.content if isinstance(shaped.content, dict) else None,
            is_error=not ok,
        )

    # ------------------------------------------------------------ writes: the human decides

    async def _proposal(
        self,
        ctx: ServerRequestContext[Any, Any],
        session: Session,
        proposal: ProposalView,
        call: str,
    ) -> types.CallToolResult | types.InputRequiredResult:
        block = proposal_block(proposal)
        caps = ctx.session.client_capabilities
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        # Asking needs the client's elicitation and, before 2026-07-28, a channel back to it
        # (a stateless HTTP request has none): otherwise the link to the web app.
        can_ask = caps is not None and caps.elicitation is not None
        if not can_ask or not (modern or ctx.session.can_send_request):
            text = proposal_markdown(block, self._confirm_link(proposal["id"]))
            return _text_result(text, {"status": "proposal", "proposal": without_hash(proposal)})
        warned = bool(proposal.get("unrequested"))
        form = types.ElicitRequestFormParams(
            message=proposal_markdown(block, None) + "\n\nWrite this to the ERP?",
            requested_schema=_question(warned),
        )
        if modern:
            # The client asks the user and repeats this call with the answer (2026-07-28); the
            # state is sealed, so only this server's question can come back as answered.
            state = self.elicitations.issue(session, proposal, call)
            return types.InputRequiredResult(
                input_requests={CONFIRM: types.ElicitRequest(params=form)}, request_state=state
            )
        asked = Asked(proposal["id"], proposal["payload_hash"], warned)
        expires = dt.datetime.fromisoformat(str(proposal["expires_at"]))
        wait = (expires - self.runtime.gateway.clock()).total_seconds()
        try:
            # Asked on this connection and answered on it: nothing for a client to forge. An
            # unanswered question ends with the proposal's life; the proposal then expires.
            with anyio.fail_after(max(wait, 0.0)):
                answer = await ctx.session.elicit_form(
                    form.message, form.requested_schema, ctx.request_id
                )
        except TimeoutError:
            return _text_result(
                "Not written: no answer came before the proposal expired.", {"status": "expired"}
            )
        return await self._decide(session, asked, answer)

    async def _decided(
        self, session: Session, asked: Asked, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        answer = (params.input_responses or {}).get(CONFIRM)
        if not isinstance(answer, types.ElicitResult):
            raise MCPError(
                INVALID_REQUEST, "The confirmation answer is missing; nothing was written."
            )
        return await self._decide(session, asked, answer)

    async def _decide(
        self, session: Session, asked: Asked, answer: types.ElicitResult
    ) -> types.CallToolResult:
        gateway = self.runtime.gateway
        content = answer.content or {}
        if answer.action == "cancel":
            # Dismissed, not answered: the proposal stays open until it expires.
            link = self._confirm_link(asked.proposal_id)
            later = f" Confirm it in the web app if you still want it: {link}" if link else ""
            return _text_result(
                f"Not written: the question was dismissed.{later}", {"status": "pending"}
            )
        if answer.action != "accept" or content.get(CONFIRM) is not True:
            outcome = await gateway.reject(session, asked.proposal_id)
            return _text_result(
                "Not written: the user did not confirm.",
                {"status": "rejected", "message": outcome.message},
            )
        # The gateway checks the owner, the expiry, single use, the exact payload and, for a
        # write suggested by content, that the user acknowledged the warning.
        outcome = await gateway.confirm(
            session,
            asked.proposal_id,
            asked.payload_hash,
            acknowledged=content.get(ACKNOWLEDGE) is True if asked.warned else None,
        )
        shaped = await self.runtime.shaper.shape(session, outcome)
        result = await self._result(session, outcome, shaped)
        link = self._document_link(outcome)
        summary = outcome.message + (f" [Open it in the ERP]({link})" if link else "")
        result.content.insert(0, types.TextContent(type="text", text=summary))
        return result

    def _confirm_link(self, proposal_id: str) -> str | None:
        return f"{self.web_url.rstrip('/')}/?proposal={proposal_id}" if self.web_url else None

    # ------------------------------------------------------------ where a write came from

    def _origin(self, session: Session) -> WriteOrigin:
        """The check of a write against content this session read (the client's model holds
        the user's words, so only what that content's text mentions is flagged)."""
        horizon = time.monotonic() - self.runtime.gateway.proposal_ttl.total_seconds()
        reads = [read for at, read in self._reads.get(session.id, ()) if at >= horizon]
        known = (session.company, session.default_company, session.currency, session.user)
        return WriteOrigin(self.runtime.catalog, None, reads, known)

    def _remember(self, session: Session, name: str, args: Any, outcome: Outcome) -> None:
        tool = self.runtime.registry.get(name)
        if tool is None or outcome.status not in (Status.OK, Status.ERP_REFUSED):
            return
        read = read_of(self.runtime.catalog, tool, args, outcome.data or outcome.refusal)
        if read is not None:
            kept = self._reads.setdefault(session.id, deque(maxlen=READS_KEPT))
            kept.append((time.monotonic(), read))

    def _document_link(self, outcome: Outcome) -> str | None:
        tool = self.runtime.registry.get(outcome.tool)
        if outcome.ok and tool is not None and tool.entity and isinstance(outcome.data, dict):
            return self.runtime.links.document(tool.entity, outcome.data)
        return None

    # ------------------------------------------------------------ results as resources

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        await self._session(ctx)
        return types.ListResourcesResult(resources=[])  # results are linked from tool replies

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        session = await self._session(ctx)
        uri = str(params.uri)
        result_id = uri.removeprefix(RESULT_URI) if uri.startswith(RESULT_URI) else ""
        data = await self.runtime.results.fetch(result_id, session.user) if result_id else None
        if data is None:
            raise MCPError(INVALID_PARAMS, f"There is no result {uri} of yours.")
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=uri, mime_type="application/json", text=json.dumps(data, default=str)
                )
            ]
        )

    async def _session(self, ctx: ServerRequestContext[Any, Any]) -> Session:
        try:
            return await self.sessions(ctx)
        except ChannelError as exc:
            raise MCPError(INVALID_REQUEST, str(exc)) from exc


def _question(warned: bool) -> dict[str, Any]:
    """The confirm form; a write suggested by content also asks the user to acknowledge that."""
    properties: dict[str, Any] = {CONFIRM: {"type": "boolean", "title": "Yes, write exactly this"}}
    if warned:
        properties[ACKNOWLEDGE] = {
            "type": "boolean",
            "title": "I know this change was not in my request, and I still want it",
        }
    return {"type": "object", "properties": properties, "required": list(properties)}


def _text_result(text: str, structured: Mapping[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=dict(structured)
    )


async def _tools_changed(ctx: ServerRequestContext[Any, Any]) -> None:
    try:
        await ctx.session.send_tool_list_changed()
    except Exception:  # a client without a back channel re-lists on its own
        return
