"""The Open Reward Standard's HTTP API (ORS Python SDK 0.1.0's server, openrewardstandard/python-sdk) against a real
``envharness serve``: discovery, sessions, prompt, task tools and tool calls answered as Server-Sent Events, spoken
with the standard library exactly as the SDK's client does (``X-API-Key``, ``X-Session-ID``, ``task_id``/``chunk``/
``end``/``error`` events)."""

from __future__ import annotations

import http.client
import json
import unittest
import urllib.parse
from typing import Any, Dict, List, Optional, Tuple

from policies import restock_goal
from tests.server import SharedServer

SHARED = SharedServer()


def setUpModule() -> None:
    SHARED.start()


def tearDownModule() -> None:
    SHARED.stop()


def request(method: str, path: str, body: Any = None, sid: Optional[str] = None, key: Optional[str] = "default",
            raw: Optional[bytes] = None) -> Tuple[int, str, str]:
    """One HTTP request to ``<server>/ors<path>``: status, content type, body text."""
    url = urllib.parse.urlsplit(SHARED.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    headers: Dict[str, str] = {"User-Agent": "ors-sdk/0.1.0", "Accept": "text/event-stream"}
    if key is not None:
        headers["X-API-Key"] = SHARED.token if key == "default" else key
    if sid is not None:
        headers["X-Session-ID"] = sid
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    conn.request(method, "/ors" + path, body=data, headers=headers)
    resp = conn.getresponse()
    text = resp.read().decode()
    conn.close()
    return resp.status, resp.getheader("Content-Type") or "", text


def get_json(method: str, path: str, body: Any = None, sid: Optional[str] = None) -> Any:
    status, _, text = request(method, path, body, sid)
    assert status == 200, (status, text)
    return json.loads(text)


def sse_events(text: str) -> List[Tuple[str, str]]:
    """The SDK's parser: ``event:``/``data:`` lines, events separated by a blank line."""
    events: List[Tuple[str, str]] = []
    event: Optional[str] = None
    data: List[str] = []
    for line in text.splitlines():
        line = line.rstrip("\r\n")
        if not line:
            if event:
                events.append((event, "\n".join(data)))
            event, data = None, []
            continue
        if line.startswith(":"):
            continue
        field, value = line.split(":", 1)
        if field == "event":
            event = value.lstrip()
        elif field == "data":
            data.append(value.lstrip())
    return events


def sse_result(text: str) -> Tuple[str, Any]:
    """What the SDK's ``resumable_sse`` returns: the task id and the joined ``chunk``+``end`` data as JSON."""
    task_id, chunks = "", []
    for event, data in sse_events(text):
        if event == "task_id":
            task_id = data.strip()
        elif event == "chunk":
            chunks.append(data)
        elif event == "end":
            chunks.append(data)
            joined = "".join(chunks)
            return task_id, (json.loads(joined) if joined else None)
        elif event == "error":
            raise RuntimeError(data)
    raise AssertionError("stream ended without an end event: " + text)


def call(env: str, sid: str, name: str, args: Dict[str, Any]) -> Tuple[str, Dict[str, Any]]:
    status, ctype, text = request("POST", f"/{env}/call", {"name": name, "input": args}, sid)
    assert status == 200, (status, text)
    assert ctype.startswith("text/event-stream"), ctype
    task_id, result = sse_result(text)
    return task_id, result


def create_session() -> str:
    status, ctype, text = request("POST", "/create_session")
    assert status == 200 and ctype.startswith("text/event-stream"), (status, ctype, text)
    task_id, result = sse_result(text)
    assert result is None
    return task_id


class OrsDiscovery(unittest.TestCase):
    def test_health_environments_tools_splits_and_tasks(self) -> None:
        self.assertEqual(get_json("GET", "/health"), {"status": "ok"})
        envs = get_json("GET", "/list_environments")
        self.assertIn("inventory", envs)
        tools = get_json("GET", "/inventory/tools")["tools"]
        names = [t["name"] for t in tools]
        self.assertIn("get_stock", names)
        self.assertIn("finish", names)
        for t in tools:
            self.assertEqual(set(t), {"name", "description", "input_schema"})
        splits = get_json("GET", "/inventory/splits")
        self.assertIn({"name": "dynamic", "type": "train"}, splits)
        listed = get_json("POST", "/inventory/tasks", {"split": "dynamic"})
        self.assertEqual(listed["env_name"], "inventory")
        self.assertGreater(len(listed["tasks"]), 0)
        count = get_json("POST", "/inventory/num_tasks", {"split": "dynamic"})["num_tasks"]
        self.assertEqual(count, len(listed["tasks"]))
        self.assertEqual(get_json("POST", "/inventory/task", {"split": "dynamic", "index": 1})["task"], listed["tasks"][1])
        self.assertEqual(get_json("POST", "/inventory/task_range", {"split": "dynamic", "start": 0, "stop": 3})["tasks"], listed["tasks"][:3])

    def test_errors_are_detail_objects_with_the_sdk_statuses(self) -> None:
        status, _, text = request("GET", "/health", key=None)
        self.assertEqual(status, 401, text)
        status, _, text = request("GET", "/health", key="wrong-token")
        self.assertEqual(status, 401, text)
        status, _, text = request("GET", "/nosuchenv/tools")
        self.assertEqual(status, 404, text)
        self.assertIn("unknown environment", json.loads(text)["detail"])
        status, _, text = request("POST", "/inventory/tasks", {"split": "nope"})
        self.assertEqual(status, 400, text)
        status, _, text = request("POST", "/inventory/task", {"split": "dynamic", "index": 10 ** 6})
        self.assertEqual(status, 400, text)
        status, _, text = request("POST", "/create", {"env_name": "inventory", "task_spec": {"task_id": "x"}})
        self.assertEqual(status, 400, text)
        self.assertIn("X-Session-ID", json.loads(text)["detail"])
        sid = create_session()
        status, _, text = request("POST", "/create", {"env_name": "inventory", "task_spec": {"tsak_id": "x"}}, sid)
        self.assertEqual(status, 422, text)
        self.assertIn("tsak_id", json.loads(text)["detail"])
        status, _, text = request("POST", "/create", {"env_name": "inventory", "task_spec": {}, "split": "dynamic", "index": 0}, sid)
        self.assertEqual(status, 422, text)
        status, _, text = request("GET", "/inventory/prompt", sid=sid)
        self.assertEqual(status, 404, text)
        status, _, text = request("POST", "/ping", sid=sid)
        self.assertEqual(status, 404, text)


class OrsEpisodes(unittest.TestCase):
    def run_restock(self, create_body: Dict[str, Any]) -> Tuple[str, List[Dict[str, Any]]]:
        sid = create_session()
        self.assertEqual(get_json("POST", "/create", create_body, sid), {"sid": sid})
        self.assertEqual(get_json("POST", "/ping", sid=sid), {"status": "ok"})
        status, _, text = request("POST", "/create", create_body, sid)
        self.assertEqual(status, 400, text)  # the session has its episode already
        prompt = get_json("GET", "/inventory/prompt", sid=sid)
        self.assertEqual(prompt[0]["type"], "text")
        self.assertEqual(set(prompt[0]), {"text", "detail", "type"})
        tools = [t["name"] for t in get_json("GET", "/inventory/task_tools", sid=sid)["tools"]]
        self.assertIn("add_stock", tools)
        item, amount = restock_goal(prompt[0]["text"])
        outputs = []
        task_id, first = call("inventory", sid, "get_stock", {"item": item})
        self.assertTrue(first["ok"])
        out = first["output"]
        self.assertEqual(set(out), {"blocks", "metadata", "reward", "finished"})
        quantity = json.loads(out["blocks"][0]["text"])["quantity"]
        self.assertEqual(out["metadata"]["step"], 1)
        self.assertFalse(out["finished"])
        outputs.append(out)
        # A client that lost the stream reconnects with the task id: the same result, not a second step.
        status, _, text = request("POST", "/inventory/call", {"name": "get_stock", "input": {"item": item}, "task_id": task_id}, sid)
        self.assertEqual(sse_result(text), (task_id, first))
        _, unknown = request("POST", "/inventory/call", {"name": "get_stock", "input": {}, "task_id": "nope"}, sid)[1:]
        self.assertEqual(sse_events(unknown), [("error", "unknown task_id")])
        for name, args in (("add_stock", {"item": item, "quantity": amount}), ("message", {"text": f"{item} now has {quantity + amount} units."}), ("finish", {})):
            _, result = call("inventory", sid, name, args)
            self.assertTrue(result["ok"], result)
            outputs.append(result["output"])
        self.assertEqual(get_json("POST", "/delete_session", sid=sid), {"sid": sid})
        status, _, text = request("POST", "/ping", sid=sid)
        self.assertEqual(status, 404, text)
        return sid, outputs

    def test_an_episode_on_a_listed_task_runs_to_a_graded_finish(self) -> None:
        task = get_json("POST", "/inventory/tasks", {"split": "dynamic"})["tasks"]
        restock = next(t for t in task if t["task_type"] == "restock")
        # The SDK's flow: a task object as /tasks lists it is the task_spec (here with a seed added).
        _, outputs = self.run_restock({"env_name": "inventory", "task_spec": dict(restock, seed=3)})
        last = outputs[-1]
        self.assertTrue(last["finished"])
        self.assertEqual(last["reward"], 1.0)
        self.assertEqual(last["metadata"]["info"]["outcome"], 1)
        self.assertEqual([o["metadata"]["step"] for o in outputs], [1, 2, 3, 4])
        self.assertTrue(last["metadata"]["episode_id"].startswith("ep_"))

    def test_a_drawn_task_and_an_agent_mistake(self) -> None:
        sid = create_session()
        get_json("POST", "/create", {"env_name": "inventory", "task_spec": {"task_type": "restock", "level": 1, "seed": 5}}, sid)
        _, result = call("inventory", sid, "no_such_tool", {})
        # An agent mistake is a recorded step (ok: true) whose block carries the error.
        self.assertTrue(result["ok"])
        self.assertIn("error", result["output"]["metadata"])
        self.assertFalse(result["output"]["finished"])
        get_json("POST", "/delete", sid=sid)
        status, _, text = request("POST", "/inventory/call", {"name": "get_stock", "input": {}}, sid)
        self.assertEqual(status, 404, text)

    def test_create_by_split_and_index(self) -> None:
        listed = get_json("POST", "/inventory/task", {"split": "dynamic", "index": 2})["task"]
        sid = create_session()
        get_json("POST", "/create", {"env_name": "inventory", "split": "dynamic", "index": 2}, sid)
        prompt = get_json("GET", "/inventory/prompt", sid=sid)
        self.assertEqual(prompt[0]["detail"]["task"]["id"], listed["task_id"])
        get_json("POST", "/delete_session", sid=sid)


if __name__ == "__main__":
    unittest.main()
