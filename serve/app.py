"""The web app of the browser table: Starlette routes, the WebSocket protocol, the tables.

Routes (nothing accepts a file, a path or code from a client)::

    GET  /                 a page saying that tables are opened by their links
    GET  /play/{token}     the table page (the same page for every link; 404 for an unknown one)
    WS   /ws/{token}       the table's frames for that link; a seat's link also takes its moves
    GET  /static/...       the page's script and style; /static/draw.js is the card and table
                           drawing of the replay viewer (one home for how a card looks)

A link's token (``secrets.token_urlsafe``) is its credential: a seat's token acts for that seat
only, the spectator's sees the public table and acts for none.

Client messages, JSON objects of at most :data:`MAX_MESSAGE` bytes::

    {"type": "act", "ask": N, "action": A}   take action A for decision N (the frame's "ask")
    {"type": "again"}                        start the next game once this one is over

Anything else — not JSON, too large, another type, a missing or extra key, a stale ``ask``, an
action not offered, a move of a spectator or out of turn — is answered with one error frame
(``{"type": "error", "message": ...}``) and changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from uno_mk_env.engine.cards import CODES
from uno_mk_env.errors import UnoMkError
from uno_mk_env.evaluation.replay_page import viewer_constants
from uno_mk_env.evaluation.replay_viewer import DRAW_JS
from uno_mk_env.files import parse_json

from .frames import error_frame, frame_text
from .scoring import warm_up
from .table import Table, TableConfig

__all__ = ["LOOPBACK_HOSTS", "MAX_MESSAGE", "Server", "create_app", "parse_message"]

STATIC = Path(__file__).resolve().parent / "static"
#: Largest client message, in bytes.
MAX_MESSAGE = 512
#: Most tables one server holds.
MAX_TABLES = 500
#: Frames waiting for one slow client before the oldest are dropped (each is a whole table).
MAX_QUEUED = 16
#: Host names the page may be reached by on the loopback interface (DNS rebinding guard).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
_HEADERS = {
    "Content-Security-Policy": ("default-src 'self'; connect-src 'self'; img-src 'self' data:; "
                                "style-src 'self'; script-src 'self'; base-uri 'none'; "
                                "frame-ancestors 'none'; form-action 'none'"),
    "Referrer-Policy": "no-referrer",  # a page's address holds its token
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


class MessageError(UnoMkError, ValueError):
    """A client message that is refused (one line)."""


def parse_message(text: str | bytes | None) -> dict[str, Any]:
    """A client message checked for its shape (the table checks turn and legality).

    Raises:
        MessageError: not one of the messages of the module docstring.
    """
    if text is None:
        raise MessageError("a message must be JSON text")
    if isinstance(text, bytes):
        raise MessageError("binary messages are not accepted; send JSON text")
    msg = parse_json(text, "the message", max_bytes=MAX_MESSAGE, max_depth=2, error=MessageError)
    if not isinstance(msg, dict):
        raise MessageError("a message must be a JSON object")
    kind = msg.get("type")
    if kind == "again" and set(msg) == {"type"}:
        return msg
    if kind == "act":
        if set(msg) != {"type", "ask", "action"}:
            raise MessageError('an "act" message has exactly the keys type, ask and action')
        for key in ("ask", "action"):
            value = msg[key]
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
                raise MessageError(f'"{key}" must be a non-negative integer')
        return msg
    raise MessageError('the message type must be "act" (with ask and action) or "again"')


class Server:
    """The tables of one server and their links; ``idle_timeout``: seconds a table nobody
    watches is kept; ``max_queued``: frames waiting for one slow client before the oldest are
    dropped (each frame is the whole table; tests that compare every frame raise it)."""

    def __init__(self, idle_timeout: float = 3600.0, max_queued: int = MAX_QUEUED) -> None:
        self.tables: dict[str, Table] = {}
        self.links: dict[str, tuple[Table, int | None]] = {}
        self.idle_timeout = idle_timeout
        self.max_queued = max_queued

    def add_table(self, config: TableConfig, start: bool = True) -> Table:
        if len(self.tables) >= MAX_TABLES:
            raise UnoMkError(f"this server already holds {MAX_TABLES} tables")
        table = Table(config)
        self.tables[table.id] = table
        for seat, token in table.tokens.items():
            self.links[token] = (table, seat)
        self.links[table.spectator_token] = (table, None)
        if start:
            table.start()
        return table

    def remove(self, table: Table) -> None:
        table.stop()
        self.tables.pop(table.id, None)
        for token in [*table.tokens.values(), table.spectator_token]:
            self.links.pop(token, None)

    def expire(self, now: float) -> list[Table]:
        """Removes the tables nobody has watched for ``idle_timeout`` seconds."""
        idle = [t for t in self.tables.values()
                if t.listeners() == 0 and now - t.last_activity > self.idle_timeout]
        for t in idle:
            self.remove(t)
        return idle

    def close(self) -> None:
        for table in list(self.tables.values()):
            self.remove(table)


def create_app(server: Server, allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS) -> Starlette:
    """The Starlette app serving ``server``'s tables to browsers reaching it by
    ``allowed_hosts`` (``("*",)``: any)."""
    constants = {**viewer_constants(), "codes": list(CODES)}  # codes: in kind id order
    draw_js = (DRAW_JS + "\nexport const CONSTANTS = " + json.dumps(constants)
               + ";\nexport { unoDrawing };\n")

    async def index(request: Request) -> Response:
        return HTMLResponse("<!DOCTYPE html><title>UNO Mario Kart</title><p>Open a table by the "
                            "link <code>uno-mk serve</code> printed.</p>")

    async def page(request: Request) -> Response:
        if request.path_params["token"] not in server.links:
            return PlainTextResponse("no table has this link", status_code=404)
        return HTMLResponse((STATIC / "table.html").read_text(encoding="utf-8"))

    async def drawing(request: Request) -> Response:
        return Response(draw_js, media_type="text/javascript")

    async def socket(websocket: WebSocket) -> None:
        link = server.links.get(websocket.path_params["token"])
        if link is None:
            await websocket.close(code=4404)
            return
        await websocket.accept()
        await _session(websocket, *link, server.max_queued)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async def janitor() -> None:
            while True:
                await asyncio.sleep(min(60.0, server.idle_timeout / 4))
                server.expire(time.monotonic())

        await asyncio.to_thread(warm_up)
        task = asyncio.create_task(janitor())
        try:
            yield
        finally:
            task.cancel()
            await asyncio.to_thread(server.close)

    routes = [
        Route("/", index), Route("/play/{token}", page), Route("/static/draw.js", drawing),
        WebSocketRoute("/ws/{token}", socket),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)),
                  Middleware(_SecurityHeaders)]
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)


async def _session(websocket: WebSocket, table: Table, seat: int | None,
                   max_queued: int) -> None:
    """One connection: frames out (latest kept when the client is slow), messages in."""
    loop = asyncio.get_running_loop()
    outbox: asyncio.Queue[str] = asyncio.Queue()

    def put(text: str) -> None:
        while outbox.qsize() >= max_queued:
            outbox.get_nowait()
        outbox.put_nowait(text)

    def deliver(text: str) -> None:  # called from the game's thread
        loop.call_soon_threadsafe(put, text)

    async def pump() -> None:
        while True:
            await websocket.send_text(await outbox.get())

    sender = asyncio.create_task(pump())
    unlisten = table.listen(seat, deliver)
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            refusal = _handle(table, seat, message.get("text"), message.get("bytes"))
            if refusal is not None:
                put(frame_text(error_frame(refusal)))
    except WebSocketDisconnect:
        pass
    finally:
        unlisten()
        sender.cancel()


def _handle(table: Table, seat: int | None, text: str | None, data: bytes | None) -> str | None:
    """Applies one client message; returns why it is refused, or ``None``."""
    try:
        msg = parse_message(text if text is not None else data)
    except MessageError as e:
        return str(e)
    if seat is None:
        return "a spectator's link cannot act"
    if msg["type"] == "again":
        return table.again(seat)
    return table.submit(seat, msg["ask"], msg["action"])


class _SecurityHeaders:
    """Adds :data:`_HEADERS` to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.lower().encode(), v.encode()) for k, v in _HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
