"""The asyncio client: keep-alive connection pool on asyncio streams, async episodes, GRPO groups, OpenEnv sessions."""

from __future__ import annotations

import asyncio
import itertools
import os
import ssl
from typing import Any, Deque, Dict, List, Optional, Sequence, Tuple, Union
from collections import deque
from urllib.parse import quote, urlsplit

from ._http import MAX_HEAD as _MAX_HEAD, body_length, check_header as _check_header, decode_answer as _decode, encode_request, parse_head
from .client import _drop_none
from .errors import EnvHarnessError, TransportError

JSON = Dict[str, Any]
StepTuple = Tuple[JSON, float, bool, bool, JSON]


class _Stale(ConnectionError):
    """A kept-alive connection was closed by the server before it answered: the request never reached it."""


_STALE = (_Stale, ConnectionResetError, BrokenPipeError, ConnectionAbortedError, asyncio.IncompleteReadError)


class _AsyncConnection:
    """One keep-alive HTTP/1.1 connection on asyncio streams."""

    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, host: str, port: int, tls: bool, timeout: float) -> "_AsyncConnection":
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, ssl=ssl.create_default_context() if tls else None, limit=_MAX_HEAD * 16), timeout)
        return cls(reader, writer)  # asyncio's TCP transports set TCP_NODELAY themselves (Python >= 3.7)

    def close(self) -> None:
        self.writer.close()

    async def exchange(self, request: bytes) -> Tuple[int, bytes, Dict[str, str], bool]:
        self.writer.write(request)
        await self.writer.drain()
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as error:
            if not error.partial:
                raise _Stale("the server closed the connection") from None
            raise ConnectionResetError("the server closed the connection in the middle of an answer") from None
        except asyncio.LimitOverrunError:
            raise ConnectionError("the answer's headers are too large") from None
        status, headers, will_close = parse_head(head[:-4])
        if status < 200:
            return await self._after_informational()
        n = body_length(status, headers)
        if n == 0:
            return status, b"", headers, will_close
        if n == -1:
            return status, await self._chunked(), headers, will_close
        if n is None:
            return status, await self.reader.read(), headers, True
        return status, await self.reader.readexactly(n), headers, will_close

    async def _after_informational(self) -> Tuple[int, bytes, Dict[str, str], bool]:
        """A 1xx answer: the real one follows on the same connection."""
        self.writer.write(b"")
        return await self.exchange(b"")

    async def _chunked(self) -> bytes:
        parts = []
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).split(b";", 1)[0].strip(), 16)
            if size == 0:
                while (await self.reader.readuntil(b"\r\n")) != b"\r\n":
                    pass
                return b"".join(parts)
            parts.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)


class AsyncClient:
    """An asyncio client of one ``envharness serve``: up to ``max_connections`` kept-alive connections, shared by
    every coroutine (requests wait for a free connection). Thousands of episodes can run concurrently.

    >>> async with AsyncClient("http://127.0.0.1:8787", token) as client:
    ...     env = await client.make(domain="inventory", seed=0)
    ...     obs, info = env.pending
    ...     obs, reward, terminated, truncated, info = await env.step(tool("list_items"))
    """

    def __init__(self, url: str, token: str, max_connections: int = 64, timeout: float = 120.0) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must be http(s)://host:port, got {url!r}")
        if max_connections < 1:
            raise ValueError("max_connections must be >= 1")
        self.url = url.rstrip("/")
        self.token = _check_header("Authorization", token)
        self.timeout = timeout
        self.max_connections = max_connections
        self._tls = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._tls else 80)
        host = f"[{self._host}]" if ":" in self._host else self._host
        self._host_header = host if parts.port is None else f"{host}:{self._port}"
        self._idle: Deque[_AsyncConnection] = deque()
        self._slots: Optional[asyncio.Semaphore] = None
        self._open = 0
        self._key_prefix = os.urandom(9).hex()
        self._key_counter = itertools.count(1)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Closes the idle connections (connections in use close when their request ends)."""
        while self._idle:
            conn = self._idle.popleft()
            conn.close()
            try:
                await conn.writer.wait_closed()
            except OSError:
                pass

    @property
    def open_connections(self) -> int:
        """Connections currently open (idle or in use)."""
        return self._open

    def _idempotency_key(self) -> str:
        return f"{self._key_prefix}-{next(self._key_counter)}"

    # ---- transport ------------------------------------------------------------------------------

    async def request(self, method: str, path: str, body: Any = None, token: Optional[str] = None,
                      headers: Optional[Dict[str, str]] = None, retry: bool = False) -> Any:
        """One request; the parsed JSON answer, or a typed ``EnvHarnessError`` for a problem.

        ``retry``: safe to send again after a broken connection (GET, or a step with an Idempotency-Key). A request
        on a kept-alive connection the server had closed is always sent again (it never reached the server).
        """
        request = encode_request(method, path, self._host_header, token or self.token, headers, body)
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_connections)
        attempts = 3 if retry else 2
        async with self._slots:
            for attempt in range(attempts):
                reused = bool(self._idle)
                conn: Optional[_AsyncConnection] = None
                try:
                    if self._idle:
                        conn = self._idle.pop()
                    else:
                        conn = await _AsyncConnection.open(self._host, self._port, self._tls, self.timeout)
                        self._open += 1
                    status, data, _, will_close = await asyncio.wait_for(conn.exchange(request), self.timeout)
                    if will_close:
                        self._discard(conn)
                    else:
                        self._idle.append(conn)
                    return _decode(status, data)
                except _STALE as error:
                    if conn is not None:
                        self._discard(conn)
                    if attempt + 1 < attempts and (reused or retry):
                        continue
                    raise TransportError(f"{method} {path}: connection to {self.url} broke: {error!r}") from error
                except (OSError, asyncio.TimeoutError, ValueError) as error:
                    if conn is not None:
                        self._discard(conn)
                    if retry and attempt + 1 < attempts:
                        continue
                    raise TransportError(f"{method} {path}: cannot reach {self.url}: {error!r}") from error
        raise TransportError(f"{method} {path}: no answer from {self.url}")  # pragma: no cover

    def _discard(self, conn: _AsyncConnection) -> None:
        conn.close()
        self._open -= 1

    # ---- server, tasks, curriculum ----------------------------------------------------------------

    async def health(self) -> JSON:
        return await self.request("GET", "/v1/health", retry=True)

    async def generate(self, templates: Sequence[Union[str, JSON]], levels: Sequence[int], count: int, seed: int = 0,
                       split: str = "dynamic", gates: Optional[Dict[str, bool]] = None) -> JSON:
        """Generates tasks through the quality gates into the pool; ``{manifest, review}``."""
        body: JSON = {"templates": [t if isinstance(t, dict) else {"id": t} for t in templates],
                      "levels": list(levels), "count": count, "seed": seed, "split": split}
        if gates is not None:
            body["gates"] = gates
        return await self.request("POST", "/v1/batches", body)

    async def curriculum(self) -> JSON:
        return await self.request("GET", "/v1/curriculum", retry=True)

    async def use_curriculum(self, strategy: str, config: Optional[JSON] = None) -> JSON:
        return await self.request("PUT", "/v1/curriculum", _drop_none(strategy=strategy, config=config), retry=True)

    async def adjust_difficulty(self, results: Sequence[JSON]) -> JSON:
        return await self.request("POST", "/v1/curriculum/adjust", {"results": list(results)})

    # ---- episodes and groups ------------------------------------------------------------------------

    async def make(self, domain: Optional[str] = None, task_type: Optional[str] = None, level: Optional[int] = None,
                   task_id: Optional[str] = None, split: Optional[str] = None, seed: Optional[int] = None,
                   run_id: Optional[str] = None, agent: Optional[str] = None, dynamics: Optional[JSON] = None,
                   resample: Optional[bool] = None) -> "AsyncEnv":
        """Creates an episode (as ``Client.make``); with ``seed`` it is reset at once (``env.pending``)."""
        body = _drop_none(taskId=task_id, domain=domain, taskType=task_type, level=level, split=split, seed=seed,
                          runId=run_id, agent=agent, dynamics=dynamics, resample=resample)
        return AsyncEnv._from_created(self, await self.request("POST", "/v1/episodes", body))

    async def join_group(self, group_id: str, size: int, domain: Optional[str] = None, task_type: Optional[str] = None,
                         level: Optional[int] = None, task_id: Optional[str] = None, seed: Optional[int] = None,
                         skip_zero_variance: Optional[bool] = None, report: Optional[bool] = None,
                         run_id: Optional[str] = None, agent: Optional[str] = None, dynamics: Optional[JSON] = None) -> "AsyncEnv":
        """Joins GRPO group ``group_id`` of ``size`` episodes: every member runs the task and seed the first drew.

        The group's results reach the curriculum once, together, when its last member ends (``group(id)`` then
        has ``stats`` and the curriculum ``update``); with ``skip_zero_variance`` a group whose members all
        scored the same is reported but not fed.
        """
        body = _drop_none(size=size, domain=domain, taskType=task_type, level=level, taskId=task_id, seed=seed,
                          skipZeroVariance=skip_zero_variance, report=report, runId=run_id, agent=agent, dynamics=dynamics)
        created = await self.request("POST", f"/v1/groups/{quote(group_id, safe='')}/episodes", body)
        env = AsyncEnv._from_created(self, created)
        env.group = created["group"]
        return env

    async def group(self, group_id: str) -> JSON:
        """A group: task, seed, members' results, and once done ``stats``, ``skipped`` and ``update``."""
        return (await self.request("GET", f"/v1/groups/{quote(group_id, safe='')}", retry=True))["group"]

    async def groups(self) -> JSON:
        """The zero-variance report: per slice ``{groups, zeroVariance, allPass, allFail, skipped, share}``."""
        return await self.request("GET", "/v1/groups", retry=True)

    def openenv(self, timeout: float = 60.0) -> "OpenEnvSession":
        """An OpenEnv WebSocket session on this server (``/openenv/ws``), authenticated with this client's token."""
        from .openenv import OpenEnvSession
        return OpenEnvSession(self.url + "/openenv", token=self.token, timeout=timeout)


class AsyncEnv:
    """One server episode driven from asyncio: ``await env.reset()``, ``await env.step(action)``."""

    def __init__(self, client: AsyncClient, episode: JSON, token: str) -> None:
        self.client = client
        self.id: str = episode["id"]
        self.token = _check_header("Authorization", token)
        self.episode = episode
        self.steps = 0
        self.info: JSON = {}
        self.pending: Optional[Tuple[JSON, JSON]] = None
        self.closed = False
        self.group: Optional[JSON] = None
        self.rewards: List[float] = []
        self._outcome: Optional[JSON] = None

    @classmethod
    def _from_created(cls, client: AsyncClient, created: JSON) -> "AsyncEnv":
        env = cls(client, created["episode"], created["token"])
        if "observation" in created:
            env._started(created["info"])
            env.pending = (created["observation"], created["info"])
        return env

    @property
    def task(self) -> JSON:
        return self.episode["task"]

    async def reset(self, seed: Optional[int] = None, options: Optional[JSON] = None) -> Tuple[JSON, JSON]:
        answer = await self.client.request("POST", f"/v1/episodes/{self.id}/reset", _drop_none(seed=seed, options=options), token=self.token)
        self._started(answer["info"])
        self.pending = None
        return answer["observation"], answer["info"]

    async def step(self, action: JSON) -> StepTuple:
        """``(observation, reward, terminated, truncated, info)``; retried safely (Idempotency-Key and expectedStep)."""
        body = {"action": action, "expectedStep": self.steps + 1}
        headers = {"Idempotency-Key": self.client._idempotency_key()}
        result = await self.client.request("POST", f"/v1/episodes/{self.id}/step", body, token=self.token, headers=headers, retry=True)
        return self._stepped(result)

    async def state(self, transitions: bool = True) -> JSON:
        answer = await self.client.request("GET", f"/v1/episodes/{self.id}{'' if transitions else '?transitions=false'}", token=self.token, retry=True)
        self.episode = answer["episode"]
        return answer

    async def chat(self) -> JSON:
        """The current attempt as OpenAI chat messages with tool calls: ``{messages, tools, reward, rewards, ...}``."""
        return await self.client.request("GET", f"/v1/episodes/{self.id}/chat", token=self.token, retry=True)

    def result(self) -> Optional[JSON]:
        """The last finished attempt as a curriculum result ``{slice, level, success, taskId, excluded}``."""
        return self._outcome

    async def close(self) -> None:
        if self.closed:
            return
        await self.client.request("DELETE", f"/v1/episodes/{self.id}", token=self.token)
        self.closed = True

    async def __aenter__(self) -> "AsyncEnv":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        try:
            await self.close()
        except EnvHarnessError:
            pass

    def _started(self, info: JSON) -> None:
        self.steps = 0
        self.info = info
        self.rewards = []
        self._outcome = None
        task = dict(self.episode.get("task", {}))
        task.update({"id": info["taskId"], "template": info["template"], "domain": info["domain"],
                     "taskType": info["taskType"], "level": info["level"]})
        self.episode = dict(self.episode, task=task, attempt=info["attempt"], attemptId=info["episodeId"], seed=info["seed"], status="running")

    def _stepped(self, result: JSON) -> StepTuple:
        info = result["info"]
        info["feedback"] = result["feedback"]
        if "truncation" in result:
            info["truncation"] = result["truncation"]
        self.steps = int(info["step"])
        reward = float(result["reward"])
        self.rewards.append(reward)
        terminated = bool(result["terminated"])
        truncated = bool(result["truncated"])
        if terminated or truncated:
            self._outcome = {"slice": f"{self.task['domain']}/{self.task['taskType']}", "level": self.task["level"],
                             "success": float(info.get("outcome", 0)), "taskId": self.task["id"],
                             "excluded": bool(info.get("excludeFromStats", False))}
        return result["observation"], reward, terminated, truncated, info
