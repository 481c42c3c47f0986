"""The EnvHarness HTTP client: one keep-alive connection, Gymnasium-style environments, typed errors."""

from __future__ import annotations

import http.client
import json
import threading
import uuid
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union
from urllib.parse import quote, urlencode, urlsplit

from .errors import EnvHarnessError, TransportError, error_from_problem

JSON = Dict[str, Any]
StepTuple = Tuple[JSON, float, bool, bool, JSON]

# Failures of a kept-alive connection that the server closed while it was idle: the request never
# reached the server, so it is sent again on a new connection.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


def tool(name: str, **args: Any) -> JSON:
    """A tool-call action: ``tool('get_stock', item='widget-1')``."""
    return {"type": "tool", "tool": name, "args": args}


def message(text: str) -> JSON:
    """A message to the simulated user."""
    return {"type": "message", "text": text}


def finish(answer: Optional[str] = None) -> JSON:
    """Ends the episode (with an answer, for question/answer tasks)."""
    return {"type": "finish"} if answer is None else {"type": "finish", "answer": answer}


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
        self._conn: Optional[http.client.HTTPConnection] = None
        self._lock = threading.Lock()

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

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._conn = cls(self._host, self._port, timeout=self.timeout)
        return self._conn

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
        payload = None if body is None else json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
        h = {"Authorization": f"Bearer {token or self.token}", "Accept": "application/json"}
        if payload is not None:
            h["Content-Type"] = "application/json"
        if headers:
            h.update(headers)
        with self._lock:
            attempts = 3 if retry else 2
            for attempt in range(attempts):
                conn = self._connection()
                reused = conn.sock is not None
                try:
                    conn.request(method, path, body=payload, headers=h)
                    response = conn.getresponse()
                    data = response.read()
                    if response.will_close:
                        conn.close()
                        self._conn = None
                    return response.status, data, {k.lower(): v for k, v in response.getheaders()}
                except _STALE as error:
                    conn.close()
                    self._conn = None
                    if attempt + 1 < attempts and (reused or retry):
                        continue
                    raise TransportError(f"{method} {path}: connection to {self.url} broke: {error!r}") from error
                except (OSError, http.client.HTTPException) as error:
                    conn.close()
                    self._conn = None
                    if retry and attempt + 1 < attempts:
                        continue
                    raise TransportError(f"{method} {path}: cannot reach {self.url}: {error!r}") from error
        raise TransportError(f"{method} {path}: no answer from {self.url}")  # pragma: no cover

    @staticmethod
    def _decode(status: int, data: bytes) -> Any:
        try:
            value = json.loads(data.decode("utf-8")) if data else None
        except ValueError:
            value = None
        if status >= 400:
            if not isinstance(value, dict):
                raise EnvHarnessError(f"HTTP {status}: {data[:200]!r}", status=status)
            raise error_from_problem(status, value)
        return value

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
             resample: Optional[bool] = None) -> "Env":
        """Creates an episode and returns its ``Env``.

        With ``task_id`` every reset runs that task. Otherwise each reset draws a task of ``domain`` /
        ``task_type`` / ``level`` from the pool; with none of them given, the active curriculum picks.
        ``seed`` resets at once (the observation is then in ``env.pending``).
        """
        body = _drop_none(taskId=task_id, domain=domain, taskType=task_type, level=level, split=split, seed=seed,
                          runId=run_id, agent=agent, dynamics=dynamics, resample=resample)
        created = self.request("POST", "/v1/episodes", body)
        env = Env(self, created["episode"], created["token"])
        if "observation" in created:
            env._started(created["info"])
            env.pending = (created["observation"], created["info"])
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
                          "expectedStep": env.steps + 1, "idempotencyKey": uuid.uuid4().hex})
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


class Env:
    """One server episode, Gymnasium-style: ``reset`` then ``step`` until ``terminated`` or ``truncated``.

    ``reset`` starts a new attempt (a new task when the env samples); ``close`` ends it on the server.
    """

    def __init__(self, client: Client, episode: JSON, token: str) -> None:
        self.client = client
        self.id: str = episode["id"]
        self.token = token
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
        body = _drop_none(seed=seed, options=options)
        answer = self.client.request("POST", f"/v1/episodes/{self.id}/reset", body, token=self.token)
        self._started(answer["info"])
        self.pending = None
        return answer["observation"], answer["info"]

    def step(self, action: JSON) -> StepTuple:
        """Applies one action; returns ``(observation, reward, terminated, truncated, info)``.

        ``info`` holds the server's step info plus ``feedback`` (typed events) and ``truncation``. Agent
        mistakes come back as an observation with ``error``, never as an exception. The step carries an
        Idempotency-Key and ``expectedStep``, so it is retried safely on a broken connection.
        """
        body = {"action": action, "expectedStep": self.steps + 1}
        headers = {"Idempotency-Key": uuid.uuid4().hex}
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
        """Closes the episode on the server (a running attempt is recorded as closed)."""
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
        info = dict(result["info"])
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
        return result["observation"], float(result["reward"]), terminated, truncated, info


def _drop_none(**values: Any) -> JSON:
    return {k: v for k, v in values.items() if v is not None}


def _query(**values: Any) -> str:
    kept = _drop_none(**values)
    return f"?{urlencode(kept)}" if kept else ""
