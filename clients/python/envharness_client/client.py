"""The EnvHarness HTTP client: one keep-alive connection, Gymnasium-style environments, typed errors."""

from __future__ import annotations

import copy
import itertools
import json
import os
import random
import socket
import ssl
import struct
import sys
import threading
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union
from urllib.parse import quote, urlencode, urlsplit

from .errors import EnvHarnessError, TransportError, error_from_problem

JSON = Dict[str, Any]
StepTuple = Tuple[JSON, float, bool, bool, JSON]

from ._http import MAX_HEAD as _MAX_HEAD, body_length, check_header as _check_header, decode_answer, encode_request, parse_head


class _Stale(ConnectionError):
    """The server closed a kept-alive connection before answering: the request never reached it."""


# Failures of a kept-alive connection that the server closed while it was idle: the request never
# reached the server, so it is sent again on a new connection.
_STALE = (_Stale, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


class _Connection:
    """One keep-alive HTTP/1.1 connection on a plain socket.

    ``http.client`` costs more per call than a whole step on the server (header objects, the email
    parser); this writes the request in one ``sendall`` and reads the answer with ``recv``.
    """

    __slots__ = ("sock", "_buffer")

    def __init__(self, host: str, port: int, timeout: float, tls: bool) -> None:
        sock = socket.create_connection((host, port), timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if tls:
                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
            else:
                _kernel_timeout(sock, timeout)
        except BaseException:
            sock.close()
            raise
        self.sock = sock
        self._buffer = b""

    def close(self) -> None:
        self.sock.close()

    def exchange(self, request: bytes) -> Tuple[int, bytes, Dict[str, str], bool]:
        """Sends a whole request; returns ``(status, body, headers, will_close)``."""
        try:
            self.sock.sendall(request)
        except BlockingIOError:
            raise socket.timeout("timed out") from None  # the kernel's send timeout
        return self._read()

    def _fill(self, got_any: bool) -> None:
        try:
            chunk = self.sock.recv(65536)
        except BlockingIOError:
            raise socket.timeout("timed out") from None  # the kernel's receive timeout
        if not chunk:
            if got_any:
                raise ConnectionResetError("the server closed the connection in the middle of an answer")
            raise _Stale("the server closed the connection")
        self._buffer += chunk

    def _read(self) -> Tuple[int, bytes, Dict[str, str], bool]:
        while True:
            end = self._buffer.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(self._buffer) > _MAX_HEAD:
                raise ConnectionError("the answer's headers are too large")
            self._fill(len(self._buffer) > 0)
        status, headers, will_close = parse_head(self._buffer[:end])
        self._buffer = self._buffer[end + 4:]
        if status < 200 and status != 101:
            return self._read()  # 1xx: the real answer follows
        n = body_length(status, headers)
        if n == 0:
            return status, b"", headers, will_close
        if n == -1:
            return status, self._read_chunked(), headers, will_close
        if n is None:
            # Delimited by the end of the connection.
            try:
                while True:
                    self._fill(True)
            except ConnectionResetError:
                pass
            body, self._buffer = self._buffer, b""
            return status, body, headers, True
        while len(self._buffer) < n:
            self._fill(True)
        body = self._buffer[:n]
        self._buffer = self._buffer[n:]
        return status, body, headers, will_close

    def _read_chunked(self) -> bytes:
        parts = []
        while True:
            size = int(self._line().split(b";", 1)[0].strip(), 16)
            if size == 0:
                while self._line():  # trailers, up to the empty line
                    pass
                return b"".join(parts)
            while len(self._buffer) < size + 2:
                self._fill(True)
            parts.append(self._buffer[:size])
            self._buffer = self._buffer[size + 2:]

    def _line(self) -> bytes:
        while b"\r\n" not in self._buffer:
            self._fill(True)
        line, _, self._buffer = self._buffer.partition(b"\r\n")
        return line


def _kernel_timeout(sock: socket.socket, timeout: float) -> None:
    """Times out blocking sends and receives in the kernel (SO_SNDTIMEO, SO_RCVTIMEO) where it can: a socket with a
    Python timeout polls before every ``send`` and ``recv``, two more system calls a request. Elsewhere (or if the
    option is refused) the Python timeout stays."""
    if sys.platform not in ("linux", "darwin") or not timeout or timeout <= 0:
        return
    seconds = int(timeout)
    value = struct.pack("ll", seconds, int((timeout - seconds) * 1_000_000))
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, value)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, value)
    except (OSError, struct.error):
        return
    sock.settimeout(None)


def tool(name: str, **args: Any) -> JSON:
    """A tool-call action: ``tool('get_stock', item='widget-1')``."""
    return {"type": "tool", "tool": name, "args": args}


def message(text: str) -> JSON:
    """A message to the simulated user."""
    return {"type": "message", "text": text}


def finish(answer: Optional[str] = None) -> JSON:
    """Ends the episode (with an answer, for question/answer tasks)."""
    return {"type": "finish"} if answer is None else {"type": "finish", "answer": answer}


# ---- Gymnasium's contract, without requiring gymnasium or numpy ------------------------------------
#
# When gymnasium is installed, Env is a ``gymnasium.Env`` and its spaces are ``gymnasium.spaces.Space``
# subclasses, so ``gymnasium.utils.env_checker.check_env`` accepts it; without it, the same attributes
# and behaviour are there (tests/test_gymnasium_*.py check each rule of Gymnasium's checkers).
try:  # pragma: no cover - depends on the installation
    import gymnasium as _gym  # type: ignore[import-not-found]

    _EnvBase: Any = _gym.Env
    _SpaceBase: Any = _gym.spaces.Space
except ImportError:  # the client itself needs only the standard library
    _EnvBase = object
    _SpaceBase = object

OBSERVATION_KINDS = ("reset", "tool", "message", "finish")
ACTION_TYPES = ("tool", "message", "finish")
_MAX_SPACE_DEPTH = 64


def _is_json(value: Any, depth: int = 0) -> bool:
    if depth > _MAX_SPACE_DEPTH:
        return False
    if value is None or isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, list):
        return all(_is_json(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v, depth + 1) for k, v in value.items())
    return False


class _BitGenerator:
    """The part of numpy's BitGenerator that Gymnasium's checker reads: ``state``."""

    __slots__ = ("_random",)

    def __init__(self, rng: random.Random) -> None:
        self._random = rng

    @property
    def state(self) -> Any:
        return self._random.getstate()


class SeededRandom:
    """The env's random number generator (``env.np_random``): seeded by ``reset(seed=...)``.

    A stand-in for ``numpy.random.Generator`` with the parts Gymnasium uses (``integers``, ``random``,
    ``bit_generator.state``); the same seed gives the same state, so resets without a seed after a
    seeded one draw the same sequence of server seeds.
    """

    def __init__(self, seed: Optional[int] = None) -> None:
        self._random = random.Random(seed if seed is not None else int.from_bytes(os.urandom(16), "big"))
        self.bit_generator = _BitGenerator(self._random)

    def integers(self, low: int, high: Optional[int] = None) -> int:
        """An int in ``[low, high)`` (``[0, low)`` when ``high`` is None), as numpy's ``integers``."""
        if high is None:
            low, high = 0, low
        return self._random.randrange(low, high)

    def random(self) -> float:
        return self._random.random()

    def choice(self, items: Sequence[Any]) -> Any:
        return items[self._random.randrange(len(items))]

    def __deepcopy__(self, memo: Dict[int, Any]) -> "SeededRandom":
        clone = SeededRandom.__new__(SeededRandom)
        clone._random = random.Random()
        clone._random.setstate(self._random.getstate())
        clone.bit_generator = _BitGenerator(clone._random)
        return clone


class ObservationSpace(_SpaceBase):
    """Observations: JSON objects with a ``kind`` of reset, tool, message or finish (docs/http.md)."""

    def __init__(self, seed: Optional[int] = None) -> None:
        self.shape = None
        self.dtype = None
        self._rng = SeededRandom(seed)

    def seed(self, seed: Optional[int] = None) -> List[int]:
        self._rng = SeededRandom(seed)
        return [] if seed is None else [seed]

    def contains(self, x: Any) -> bool:
        if not isinstance(x, dict) or x.get("kind") not in OBSERVATION_KINDS or not _is_json(x):
            return False
        if "text" in x and not isinstance(x["text"], str):
            return False
        if "error" in x and not (isinstance(x["error"], dict) and isinstance(x["error"].get("code"), str)):
            return False
        return True

    def __contains__(self, x: Any) -> bool:
        return self.contains(x)

    def sample(self, mask: Any = None, probability: Any = None) -> JSON:
        kind = self._rng.choice(OBSERVATION_KINDS)
        return {"kind": kind, "text": f"sample {self._rng.integers(1 << 30)}"}

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "ObservationSpace(kinds=reset|tool|message|finish)"


class ActionSpace(_SpaceBase):
    """Actions: ``tool(name, **args)`` of the episode's tools, ``message(text)`` or ``finish(answer)``."""

    def __init__(self, tools: Sequence[str] = (), seed: Optional[int] = None) -> None:
        self.shape = None
        self.dtype = None
        self.tools: List[str] = list(tools)
        self._rng = SeededRandom(seed)

    def seed(self, seed: Optional[int] = None) -> List[int]:
        self._rng = SeededRandom(seed)
        return [] if seed is None else [seed]

    def contains(self, x: Any) -> bool:
        if not isinstance(x, dict) or x.get("type") not in ACTION_TYPES or not _is_json(x):
            return False
        if x["type"] == "tool":
            return isinstance(x.get("tool"), str) and (not self.tools or x["tool"] in self.tools) and isinstance(x.get("args", {}), dict)
        if x["type"] == "message":
            return isinstance(x.get("text"), str)
        return x.get("answer") is None or isinstance(x.get("answer"), str)

    def __contains__(self, x: Any) -> bool:
        return self.contains(x)

    def sample(self, mask: Any = None, probability: Any = None) -> JSON:
        """A valid action from the space's own generator: a tool call without arguments, or a message."""
        if self.tools and self._rng.random() < 0.5:
            return tool(self._rng.choice(self.tools))
        return message(f"hello {self._rng.integers(1 << 16)}")

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"ActionSpace(tools={self.tools!r})"


class Client:
    """A client of one ``envharness serve`` (API v1).

    Holds one keep-alive HTTP connection; calls are serialised by a lock, so one client can be shared
    by threads (use one client per thread for parallel requests, or ``step_many``).

    >>> client = Client("http://127.0.0.1:8787", token)
    >>> env = client.make("retail")
    >>> obs, info = env.reset(seed=0)
    """

    def __init__(self, url: str, token: str, timeout: float = 120.0) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must be http(s)://host:port, got {url!r}")
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        host = f"[{self._host}]" if ":" in self._host else self._host
        self._host_header = host if parts.port is None else f"{host}:{self._port}"
        _check_header("Authorization", token)
        self._conn: Optional[_Connection] = None
        self._lock = threading.Lock()
        # Idempotency keys: a random prefix per client and a counter (unique, and cheaper than uuid4).
        self._key_prefix = os.urandom(9).hex()
        self._key_counter = itertools.count(1)

    # ---- transport ------------------------------------------------------------------------

    def close(self) -> None:
        """Closes the connection (a later call opens a new one)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _connection(self) -> _Connection:
        if self._conn is None:
            self._conn = _Connection(self._host, self._port, self.timeout, self._https)
        return self._conn

    def _idempotency_key(self) -> str:
        return f"{self._key_prefix}-{next(self._key_counter)}"

    def request(self, method: str, path: str, body: Any = None, token: Optional[str] = None,
                headers: Optional[Dict[str, str]] = None, retry: bool = False) -> Any:
        """Sends one request and returns the parsed JSON answer; raises a typed ``EnvHarnessError`` for problems.

        ``retry``: the request is safe to send again after a broken connection (GET, or a step with an
        Idempotency-Key). Any request is sent again when a kept-alive connection turns out to be stale.
        """
        status, data, _ = self._exchange(method, path, body, token, headers, retry)
        return self._decode(status, data)

    def _exchange(self, method: str, path: str, body: Any, token: Optional[str], headers: Optional[Dict[str, str]],
                  retry: bool) -> Tuple[int, bytes, Dict[str, str]]:
        request = encode_request(method, path, self._host_header, token or self.token, headers, body)
        with self._lock:
            attempts = 3 if retry else 2
            for attempt in range(attempts):
                reused = self._conn is not None
                try:
                    conn = self._connection()
                    status, data, answer_headers, will_close = conn.exchange(request)
                    if will_close:
                        conn.close()
                        self._conn = None
                    return status, data, answer_headers
                except _STALE as error:
                    self._drop()
                    if attempt + 1 < attempts and (reused or retry):
                        continue
                    raise TransportError(f"{method} {path}: connection to {self.url} broke: {error!r}") from error
                except (OSError, ValueError) as error:
                    self._drop()
                    if retry and attempt + 1 < attempts:
                        continue
                    raise TransportError(f"{method} {path}: cannot reach {self.url}: {error!r}") from error
        raise TransportError(f"{method} {path}: no answer from {self.url}")  # pragma: no cover

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    _decode = staticmethod(decode_answer)

    # ---- server -----------------------------------------------------------------------------

    def health(self) -> JSON:
        return self.request("GET", "/v1/health", retry=True)

    def openapi(self) -> JSON:
        """The OpenAPI 3.1 document of the API."""
        return self.request("GET", "/v1/openapi.json", retry=True)

    # ---- tasks ------------------------------------------------------------------------------

    def templates(self) -> List[JSON]:
        return self.request("GET", "/v1/templates", retry=True)["templates"]

    def pool(self) -> JSON:
        """Pool counts by split, slice and level."""
        return self.request("GET", "/v1/pool", retry=True)

    def generate(self, templates: Sequence[Union[str, JSON]], levels: Sequence[int], count: int, seed: int = 0,
                 split: str = "dynamic", gates: Optional[Dict[str, bool]] = None, review_share: Optional[float] = None) -> JSON:
        """Generates a batch of tasks through the quality gates into the pool; returns ``{manifest, review}``."""
        body: JSON = {
            "templates": [t if isinstance(t, dict) else {"id": t} for t in templates],
            "levels": list(levels), "count": count, "seed": seed, "split": split,
        }
        if gates is not None:
            body["gates"] = gates
        if review_share is not None:
            body["reviewShare"] = review_share
        return self.request("POST", "/v1/batches", body)

    def sample_task(self, domain: Optional[str] = None, task_type: Optional[str] = None, level: Optional[int] = None,
                    split: Optional[str] = None, full: bool = False) -> JSON:
        """Draws a task from the pool (the curriculum decides when nothing is pinned)."""
        query = _query(domain=domain, taskType=task_type, level=level, split=split, full="true" if full else None)
        return self.request("GET", f"/v1/tasks/sample{query}")["task"]

    def get_task(self, task_id: str, full: bool = False) -> JSON:
        """A stored task; the reference solution only with ``full=True``."""
        return self.request("GET", f"/v1/tasks/{quote(task_id, safe='')}{'?full=true' if full else ''}", retry=True)["task"]

    # ---- episodes ---------------------------------------------------------------------------

    def make(self, domain: Optional[str] = None, task_type: Optional[str] = None, level: Optional[int] = None,
             task_id: Optional[str] = None, split: Optional[str] = None, seed: Optional[int] = None,
             run_id: Optional[str] = None, agent: Optional[str] = None, dynamics: Optional[JSON] = None,
             resample: Optional[bool] = None, render_mode: Optional[str] = None) -> "Env":
        """Creates an episode and returns its ``Env``.

        With ``task_id`` every reset runs that task. Otherwise each reset draws a task of ``domain`` /
        ``task_type`` / ``level`` from the pool; with none of them given, the active curriculum picks.
        ``seed`` resets at once (the observation is then in ``env.pending``).
        """
        body = _drop_none(taskId=task_id, domain=domain, taskType=task_type, level=level, split=split, seed=seed,
                          runId=run_id, agent=agent, dynamics=dynamics, resample=resample)
        created = self.request("POST", "/v1/episodes", body)
        env = Env(self, created["episode"], created["token"], render_mode=render_mode)
        if seed is not None:
            env._np_random, env._np_random_seed = SeededRandom(seed), seed
        if "observation" in created:
            env._started(created["info"])
            env.pending = (created["observation"], created["info"])
            env._observed(created["observation"])
        return env

    def step_many(self, pairs: Iterable[Tuple["Env", JSON]], raise_on_error: bool = True) -> List[Union[StepTuple, EnvHarnessError]]:
        """Steps many environments in one request (one commit for all).

        Returns one ``(obs, reward, terminated, truncated, info)`` per pair, in order. An item that
        failed is its exception instead; with ``raise_on_error`` (default) the first one is raised, with
        ``.results`` holding them all.
        """
        pairs = list(pairs)
        items = []
        for env, action in pairs:
            items.append({"episodeId": env.id, "token": env.token, "action": action,
                          "expectedStep": env.steps + 1, "idempotencyKey": self._idempotency_key()})
        answer = self.request("POST", "/v1/steps", {"steps": items}, retry=True)
        results: List[Union[StepTuple, EnvHarnessError]] = []
        first: Optional[EnvHarnessError] = None
        for (env, _), item in zip(pairs, answer["results"]):
            if item["ok"]:
                results.append(env._stepped(item["result"]))
            else:
                problem = item["problem"]
                error = error_from_problem(int(problem.get("status", 0)), problem)
                results.append(error)
                first = first or error
        if first is not None and raise_on_error:
            first.results = results  # type: ignore[attr-defined]
            raise first
        return results

    # ---- curriculum -------------------------------------------------------------------------

    def curriculum(self) -> JSON:
        """Curriculum state: strategy, levels, weights and per-slice statistics."""
        return self.request("GET", "/v1/curriculum", retry=True)

    def use_curriculum(self, strategy: str, config: Optional[JSON] = None) -> JSON:
        """Starts a curriculum (``uniform``, ``threshold``, ``learning-progress``, ``prioritized-replay``, ``learnability``)."""
        return self.request("PUT", "/v1/curriculum", _drop_none(strategy=strategy, config=config), retry=True)

    def adjust_difficulty(self, results: Sequence[JSON]) -> JSON:
        """Feeds episode results (``{slice, level, success, taskId?}``); levels and weights move."""
        return self.request("POST", "/v1/curriculum/adjust", {"results": list(results)})

    def update_distribution(self, results: Sequence[JSON]) -> JSON:
        """Feeds episode results; slice weights move toward weak spots, levels stay."""
        return self.request("POST", "/v1/curriculum/distribution", {"results": list(results)})

    # ---- snapshots --------------------------------------------------------------------------

    def snapshot(self, label: Optional[str] = None) -> JSON:
        """Snapshots the complete environment version; its ``id`` is the digest of its content."""
        return self.request("POST", "/v1/snapshots", _drop_none(label=label))

    def snapshots(self) -> List[JSON]:
        return self.request("GET", "/v1/snapshots", retry=True)["snapshots"]

    def get_snapshot(self, snapshot_id: str) -> JSON:
        return self.request("GET", f"/v1/snapshots/{quote(snapshot_id, safe='')}", retry=True)

    def restore(self, snapshot_id: str) -> JSON:
        """Restores sampler, curriculum and config: sampling continues exactly as after the snapshot."""
        return self.request("POST", f"/v1/snapshots/{quote(snapshot_id, safe='')}/restore", {})

    # ---- runs -------------------------------------------------------------------------------

    def create_run(self, agent: str, version: str = "0", config: Any = None, strategy: Optional[str] = None,
                   seed: Optional[int] = None, run_config: Any = None) -> JSON:
        """Starts an experiment run; pass its ``id`` as ``make(run_id=...)`` to record episodes into it."""
        body = _drop_none(agent=_drop_none(name=agent, version=version, config=config), strategy=strategy, seed=seed, config=run_config)
        return self.request("POST", "/v1/runs", body)["run"]

    def finish_run(self, run_id: str, summary: Any = None, status: str = "finished") -> JSON:
        return self.request("POST", f"/v1/runs/{quote(run_id, safe='')}/finish", _drop_none(status=status, summary=summary))["run"]

    def get_run(self, run_id: str, events: bool = False) -> JSON:
        return self.request("GET", f"/v1/runs/{quote(run_id, safe='')}{'?events=true' if events else ''}", retry=True)

    def runs(self) -> List[JSON]:
        return self.request("GET", "/v1/runs", retry=True)["runs"]

    def evaluate(self, agent: str, split: Optional[str] = None, k: Optional[int] = None, limit: Optional[int] = None,
                 domains: Optional[Sequence[str]] = None) -> JSON:
        """Evaluates a server-side agent (curriculum frozen); returns ``{run, rows}`` with pass^k per slice."""
        return self.request("POST", "/v1/runs", {"evaluate": _drop_none(agent=agent, split=split, k=k, limit=limit,
                                                                          domains=list(domains) if domains else None)})


class Env(_EnvBase):
    """One server episode, a Gymnasium environment: ``reset`` then ``step`` until ``terminated`` or ``truncated``.

    ``reset`` starts a new attempt (a new task when the env samples); ``close`` ends it on the server.
    Gymnasium's contract holds: ``reset(seed=s)`` gives the same task and observation every time (the
    server draws the task from the seed), a step from it with the same action gives the same result,
    and ``reset()`` without a seed draws its seed from ``np_random`` (seeded by the last ``reset(seed=...)``,
    or from the OS at first). ``observation_space``/``action_space`` declare JSON observations and
    actions; ``render()`` (mode ``"ansi"``) returns the last observation as text.
    """

    metadata: Dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}
    spec = None

    def __init__(self, client: Client, episode: JSON, token: str, render_mode: Optional[str] = None) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.render_mode = render_mode
        self.observation_space = ObservationSpace()
        self.action_space = ActionSpace()
        self._np_random: Optional[SeededRandom] = None
        self._np_random_seed: Optional[int] = None
        self._last_observation: Optional[JSON] = None
        self.client = client
        self.id: str = episode["id"]
        self.token = _check_header("Authorization", token)
        self.episode = episode
        self.steps = 0
        self.info: JSON = {}
        self.pending: Optional[Tuple[JSON, JSON]] = None
        self.closed = False
        self._outcome: Optional[JSON] = None

    @property
    def task(self) -> JSON:
        """The current task (id, template, domain, taskType, level)."""
        return self.episode["task"]

    def reset(self, seed: Optional[int] = None, options: Optional[JSON] = None) -> Tuple[JSON, JSON]:
        """Starts a new attempt; returns ``(observation, info)``. ``options``: ``{taskId?, resample?}``."""
        if seed is not None:
            self._np_random, self._np_random_seed = SeededRandom(seed), seed
            server_seed = seed
        else:
            # A seed from the env's generator: reproducible after a seeded reset, fresh otherwise.
            server_seed = self.np_random.integers(0, 2**31 - 1)
        body = _drop_none(seed=server_seed, options=options)
        answer = self.client.request("POST", f"/v1/episodes/{self.id}/reset", body, token=self.token)
        self._started(answer["info"])
        self.pending = None
        self._observed(answer["observation"])
        return answer["observation"], answer["info"]

    @property
    def np_random(self) -> SeededRandom:
        """The env's generator (Gymnasium's ``np_random``), created from OS entropy if no seed was given."""
        if self._np_random is None:
            self._np_random, self._np_random_seed = SeededRandom(), -1
        return self._np_random

    @np_random.setter
    def np_random(self, value: SeededRandom) -> None:
        self._np_random, self._np_random_seed = value, -1

    @property
    def np_random_seed(self) -> int:
        """The seed of the last ``reset(seed=...)``; -1 when the generator was not seeded by one."""
        if self._np_random_seed is None:
            self.np_random
        return int(self._np_random_seed)  # type: ignore[arg-type]

    @property
    def unwrapped(self) -> "Env":
        return self

    def render(self) -> Optional[str]:
        """With ``render_mode="ansi"``: the last observation as text (None before the first reset)."""
        if self.render_mode is None or self._last_observation is None:
            return None
        obs = self._last_observation
        lines = [f"[{obs.get('kind')}] {obs.get('text', '')}".rstrip()]
        if "output" in obs:
            lines.append(json.dumps(obs["output"], sort_keys=True, ensure_ascii=False))
        if "error" in obs:
            lines.append(f"error {obs['error'].get('code')}: {obs['error'].get('message', '')}")
        return "\n".join(lines)

    def _observed(self, observation: JSON) -> None:
        self._last_observation = observation
        tools = observation.get("tools")
        if observation.get("kind") == "reset" and isinstance(tools, list):
            names = [t.get("name") for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
            seed = self._np_random_seed if self._np_random_seed is not None and self._np_random_seed >= 0 else None
            if names != self.action_space.tools:
                self.action_space = ActionSpace(names, seed)

    def step(self, action: JSON) -> StepTuple:
        """Applies one action; returns ``(observation, reward, terminated, truncated, info)``.

        ``info`` holds the server's step info plus ``feedback`` (typed events) and ``truncation``. Agent
        mistakes come back as an observation with ``error``, never as an exception. The step carries an
        Idempotency-Key and ``expectedStep``, so it is retried safely on a broken connection.
        """
        body = {"action": action, "expectedStep": self.steps + 1}
        headers = {"Idempotency-Key": self.client._idempotency_key()}
        result = self.client.request("POST", f"/v1/episodes/{self.id}/step", body, token=self.token, headers=headers, retry=True)
        return self._stepped(result)

    def state(self, transitions: bool = True) -> JSON:
        """The episode as the server sees it, with the current attempt's stored transitions."""
        answer = self.client.request("GET", f"/v1/episodes/{self.id}{'' if transitions else '?transitions=false'}", token=self.token, retry=True)
        self.episode = answer["episode"]
        return answer

    def result(self) -> Optional[JSON]:
        """The last finished attempt as a curriculum result ``{slice, level, success, taskId, excluded}``."""
        return self._outcome

    def close(self) -> None:
        """Closes the episode on the server (a running attempt is recorded as closed); closing again does nothing."""
        if self.closed:
            return
        self.client.request("DELETE", f"/v1/episodes/{self.id}", token=self.token)
        self.closed = True

    def __enter__(self) -> "Env":
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.close()
        except EnvHarnessError:
            pass

    # ---- bookkeeping ------------------------------------------------------------------------

    def _started(self, info: JSON) -> None:
        self.steps = 0
        self.info = info
        self._outcome = None
        task = dict(self.episode.get("task", {}))
        task.update({"id": info["taskId"], "template": info["template"], "domain": info["domain"],
                     "taskType": info["taskType"], "level": info["level"]})
        self.episode = dict(self.episode, task=task, attempt=info["attempt"], attemptId=info["episodeId"], seed=info["seed"], status="running")

    def _stepped(self, result: JSON) -> StepTuple:
        info = result["info"]  # freshly parsed: extended in place
        info["feedback"] = result["feedback"]
        if "truncation" in result:
            info["truncation"] = result["truncation"]
        self.steps = int(info["step"])
        terminated = bool(result["terminated"])
        truncated = bool(result["truncated"])
        if terminated or truncated:
            self._outcome = {
                "slice": f"{self.task['domain']}/{self.task['taskType']}",
                "level": self.task["level"],
                "success": float(info.get("outcome", 0)),
                "taskId": self.task["id"],
                "excluded": bool(info.get("excludeFromStats", False)),
            }
        self._last_observation = result["observation"]
        return result["observation"], float(result["reward"]), terminated, truncated, info


def _drop_none(**values: Any) -> JSON:
    return {k: v for k, v in values.items() if v is not None}


def _query(**values: Any) -> str:
    kept = _drop_none(**values)
    return f"?{urlencode(kept)}" if kept else ""
