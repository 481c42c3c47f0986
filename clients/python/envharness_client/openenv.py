"""OpenEnv's WebSocket session protocol (meta-pytorch/OpenEnv 0.2.3, ``EnvClient``) on asyncio, no dependencies.

The messages are OpenEnv's: ``{"type": "reset", "data": {...}}``, ``{"type": "step", "data": action}``,
``{"type": "state"}``, ``{"type": "close"}``; answers ``observation``/``state``/``error``. Against ``envharness serve``
the base URL is ``http://host:port/openenv`` (with ``token``) or ``http://host:port/openenv/key/<token>``; OpenEnv's
own ``GenericEnvClient(base_url=...)`` works with the second form unchanged.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from ._http import encode_json
from .errors import CapacityReachedError, OpenEnvError
from .websocket import WebSocket

JSON = Dict[str, Any]


@dataclass
class StepResult:
    """OpenEnv's ``StepResult``: ``observation`` (a dict; EnvHarness puts feedback, budgets and curriculum data in
    ``observation["metadata"]``), ``reward`` (None after reset) and ``done`` (terminated or truncated)."""

    observation: JSON
    reward: Optional[float] = None
    done: bool = False
    metadata: JSON = field(default_factory=dict)


def ws_url(base_url: str) -> str:
    """OpenEnv's ``convert_to_ws_url(base_url) + "/ws"``."""
    url = base_url.rstrip("/")
    if url.startswith("http://"):
        url = "ws://" + url[7:]
    elif url.startswith("https://"):
        url = "wss://" + url[8:]
    elif not url.startswith(("ws://", "wss://")):
        url = "ws://" + url
    return url + "/ws"


class OpenEnvSession:
    """One OpenEnv session (one server-side environment instance) over a WebSocket.

    >>> async with OpenEnvSession("http://127.0.0.1:8787/openenv", token=token) as env:
    ...     result = await env.reset(seed=0, domain="inventory")
    ...     result = await env.step({"type": "tool", "tool": "list_items", "args": {}})
    """

    def __init__(self, base_url: str, token: Optional[str] = None, timeout: float = 60.0,
                 max_message_size: int = 100 * 1024 * 1024) -> None:
        self.url = ws_url(base_url)
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.timeout = timeout
        self._max = max_message_size
        self._ws: Optional[WebSocket] = None
        self._connecting: Optional["asyncio.Future[WebSocket]"] = None

    async def connect(self) -> "OpenEnvSession":
        """Opens the connection, once: calls that overlap before it is open all wait for the same one."""
        if self._ws is None:
            connecting = self._connecting
            if connecting is None:
                connecting = self._connecting = asyncio.ensure_future(
                    WebSocket.connect(self.url, self._headers, timeout=self.timeout, max_size=self._max))
                connecting.add_done_callback(self._connected)
            # Shielded: a caller cancelled while it waits does not cancel the others' connection.
            await asyncio.shield(connecting)
        return self

    def _connected(self, connecting: "asyncio.Future[WebSocket]") -> None:
        # Runs before any waiter resumes, so that they all find the connection in ``_ws``.
        if self._connecting is not connecting:
            return  # closed meanwhile: ``close`` took it
        self._connecting = None
        if not connecting.cancelled() and connecting.exception() is None:
            self._ws = connecting.result()

    async def __aenter__(self) -> "OpenEnvSession":
        return await self.connect()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def _call(self, message: JSON) -> JSON:
        ws = self._ws
        if ws is None:
            ws = (await self.connect())._ws
            if ws is None:
                raise OpenEnvError("the session was closed while it connected", code="CLOSED", data={})
        # Calls may overlap: the server answers a session's messages in order, and so does ``request``.
        answer = json.loads(await ws.request(encode_json(message), self.timeout))
        if answer.get("type") == "error":
            data = answer.get("data", {})
            code = str(data.get("code", ""))
            cls = CapacityReachedError if code == "CAPACITY_REACHED" else OpenEnvError
            raise cls(str(data.get("message", "")), code=code, data=data)
        return answer

    async def reset(self, **kwargs: Any) -> StepResult:
        """Starts an episode; kwargs: ``seed``, ``task_id``, ``domain``, ``task_type``, ``level``, ``group_id``, ``group_size``, ..."""
        return _result((await self._call({"type": "reset", "data": kwargs}))["data"])

    async def step(self, action: JSON) -> StepResult:
        """Applies an EnvHarness action (``{"type": "tool", ...}``, ``message``, ``finish``) or OpenEnv's ``call_tool``."""
        return _result((await self._call({"type": "step", "data": action}))["data"])

    async def state(self) -> JSON:
        return (await self._call({"type": "state"}))["data"]

    async def close(self) -> None:
        """Sends OpenEnv's ``close`` message and closes the connection (the episode is recorded as closed)."""
        ws, self._ws = self._ws, None
        connecting, self._connecting = self._connecting, None
        if ws is None and connecting is not None:
            # Still connecting: the connection is closed once it is open (its waiters find the session closed).
            try:
                ws = await asyncio.shield(connecting)
            except Exception:
                return
        if ws is None:
            return
        try:
            await ws.send_text('{"type":"close"}')
        except Exception:
            pass
        await ws.close()


def _result(data: JSON) -> StepResult:
    observation = data.get("observation", {})
    reward = data.get("reward")
    return StepResult(observation=observation, reward=None if reward is None else float(reward), done=bool(data.get("done", False)),
                      metadata=observation.get("metadata", {}) if isinstance(observation, dict) else {})
