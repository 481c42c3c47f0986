"""OpenEnv's wire protocol (HTTP and WebSocket), the asyncio client at 1,000 concurrent episodes, GRPO groups, chat
rollouts and shaping rewards, against a real ``envharness serve``."""

from __future__ import annotations

import asyncio
import json
import time
import unittest
import unittest.mock
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

from envharness_client import (AsyncClient, CapacityReachedError, Client, InvalidParamsError, OpenEnvError,
                               OpenEnvSession, StoreConflictError, UnauthorizedError, finish, message, tool)
from envharness_client.websocket import WebSocket
from policies import restock_goal
from tests.server import SharedServer

MAX_SESSIONS = 64
SHARED = SharedServer(["--openenv-max-sessions", str(MAX_SESSIONS)])
CLIENT: Client


def setUpModule() -> None:
    global CLIENT
    CLIENT = SHARED.start()


def tearDownModule() -> None:
    SHARED.stop()


def http(method: str, path: str, body: Any = None, token: Optional[str] = None) -> Tuple[int, Any]:
    """A plain urllib request (what any OpenEnv HTTP caller does)."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(SHARED.url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def base() -> str:
    """OpenEnv's base URL for this server, with the token in the path (OpenEnv's clients send no headers)."""
    return f"{SHARED.url}/openenv/key/{SHARED.token}"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class OpenEnvHttp(unittest.TestCase):
    def test_info_endpoints_have_openenv_shapes(self) -> None:
        key = f"/openenv/key/{SHARED.token}"
        self.assertEqual(http("GET", f"{key}/health"), (200, {"status": "healthy"}))
        status, meta = http("GET", "/openenv/metadata", token=SHARED.token)
        self.assertEqual(status, 200)
        self.assertEqual(set(meta), {"name", "description", "readme_content", "version", "author", "documentation_url"})
        status, schema = http("GET", f"{key}/schema")
        self.assertEqual(set(schema), {"action", "observation", "state"})
        self.assertIn("call_tool", json.dumps(schema["action"]))
        self.assertEqual(http("GET", f"{key}/state"), (200, {"episode_id": None, "step_count": 0}))

    def test_auth_is_required(self) -> None:
        status, problem = http("GET", "/openenv/health")
        self.assertEqual((status, problem["code"]), (401, "UNAUTHORIZED"))
        status, problem = http("GET", "/openenv/key/not-the-token-at-all/health")
        self.assertEqual((status, problem["code"]), (401, "UNAUTHORIZED"))

    def test_http_episodes_run_to_the_end(self) -> None:
        key = f"/openenv/key/{SHARED.token}"
        for seed in range(3):
            status, reset = http("POST", f"{key}/reset", {"seed": seed, "domain": "inventory", "task_type": "restock"})
            self.assertEqual(status, 200, reset)
            self.assertEqual(set(reset), {"observation", "reward", "done"})
            self.assertIsNone(reset["reward"])
            self.assertFalse(reset["done"])
            meta = reset["observation"]["metadata"]
            self.assertEqual(meta["task"]["slice"], "inventory/restock")
            self.assertEqual(meta["task"]["seed"], seed)
            self.assertIn("steps", meta["budget"]["limit"])
            eid = meta["episode_id"]
            item, amount = restock_goal(reset["observation"]["text"])
            status, r = http("POST", f"{key}/step", {"episode_id": eid, "action": {"type": "call_tool", "tool_name": "get_stock", "arguments": {"item": item}, "metadata": {}}})
            self.assertEqual(status, 200, r)
            quantity = r["observation"]["output"]["quantity"]
            self.assertEqual(r["observation"]["metadata"]["step"], 1)
            self.assertEqual(r["observation"]["metadata"]["budget"]["used"]["steps"], 1)
            for action in (tool("add_stock", item=item, quantity=amount), message(f"{item} now has {quantity + amount} units."), finish()):
                status, r = http("POST", f"{key}/step", {"episode_id": eid, "action": action, "request_id": f"r-{seed}-{action['type']}"})
                self.assertEqual(status, 200, r)
            self.assertTrue(r["done"])
            self.assertEqual(r["reward"], 1.0)
            self.assertTrue(r["observation"]["metadata"]["terminated"])
            self.assertEqual(r["observation"]["metadata"]["info"]["outcome"], 1)
            status, state = http("GET", f"{key}/state?episode_id={eid}")
            self.assertEqual((state["episode_id"], state["step_count"], state["status"]), (eid, 4, "terminated"))

    def test_bad_requests_name_the_field(self) -> None:
        key = f"/openenv/key/{SHARED.token}"
        status, problem = http("POST", f"{key}/reset", {"sed": 1})
        self.assertEqual((status, problem["code"], problem["pointer"]), (422, "PARAMS_INVALID", "/sed"))
        status, problem = http("POST", f"{key}/step", {"action": {"type": "finish"}})
        self.assertEqual((status, problem["pointer"]), (422, "/episode_id"))
        status, problem = http("POST", f"{key}/step", {"episode_id": "nope", "action": {"type": "finish"}})
        self.assertEqual((status, problem["code"]), (404, "EPISODE_NOT_FOUND"))

    def test_agent_mistakes_are_observations(self) -> None:
        key = f"/openenv/key/{SHARED.token}"
        _, reset = http("POST", f"{key}/reset", {"seed": 1, "domain": "inventory"})
        eid = reset["observation"]["metadata"]["episode_id"]
        status, r = http("POST", f"{key}/step", {"episode_id": eid, "action": {"type": "tool", "tool": "no_such_tool", "args": {}}})
        self.assertEqual(status, 200)
        self.assertEqual(r["observation"]["error"]["code"], "INVALID_ACTION")
        self.assertIn("INVALID_ACTION", [f["code"] for f in r["observation"]["metadata"]["feedback"]])


class OpenEnvMcp(unittest.TestCase):
    """OpenEnv's MCP JSON-RPC (http_server.py ``mcp_handler``): ``POST /mcp``, the ``/mcp`` WebSocket and ``/ws``'s ``mcp`` message."""

    def rpc(self, method: str, params: Optional[Dict[str, Any]] = None, rid: Any = 1) -> Dict[str, Any]:
        body: Dict[str, Any] = {"jsonrpc": "2.0", "method": method, "id": rid}
        if params is not None:
            body["params"] = params
        status, answer = http("POST", f"/openenv/key/{SHARED.token}/mcp", body)
        self.assertEqual(status, 200)
        self.assertEqual((answer["jsonrpc"], answer["id"]), ("2.0", rid))
        return answer

    def test_http_session_lists_and_calls_tools_as_episode_steps(self) -> None:
        created = self.rpc("openenv/session/create", {"seed": 5, "domain": "inventory", "task_type": "restock"})
        sid = created["result"]["session_id"]
        listed = self.rpc("tools/list", {"session_id": sid})["result"]["tools"]
        names = [t["name"] for t in listed]
        self.assertIn("get_stock", names)
        self.assertEqual(names[-3:], ["reset", "message", "finish"])
        self.assertTrue(all(t["inputSchema"]["type"] == "object" and isinstance(t["description"], str) for t in listed))
        # The task text comes with the reset tool's answer; a fresh reset of the same seed gives the same task.
        again = self.rpc("tools/call", {"session_id": sid, "name": "reset", "arguments": {"seed": 5, "domain": "inventory", "task_type": "restock"}})["result"]
        self.assertFalse(again["isError"])
        item, amount = restock_goal(again["structuredContent"]["observation"]["text"])
        got = self.rpc("tools/call", {"session_id": sid, "name": "get_stock", "arguments": {"item": item}})["result"]
        self.assertEqual((got["isError"], got["structuredContent"]["observation"]["metadata"]["step"]), (False, 1))
        quantity = got["data"]["quantity"]
        self.assertIn(str(quantity), got["content"][0]["text"])
        bad = self.rpc("tools/call", {"session_id": sid, "name": "add_stock", "arguments": {"item": item}})["result"]
        self.assertTrue(bad["isError"])  # an agent mistake: a recorded step with an INVALID_ACTION observation
        self.assertEqual(bad["structuredContent"]["observation"]["metadata"]["step"], 2)
        self.rpc("tools/call", {"session_id": sid, "name": "add_stock", "arguments": {"item": item, "quantity": amount}})
        reply = self.rpc("tools/call", {"session_id": sid, "name": "message", "arguments": {"text": f"{item} now has {quantity + amount} units."}})
        self.assertIsInstance(reply["result"]["data"], str)
        end = self.rpc("tools/call", {"session_id": sid, "name": "finish", "arguments": {}})["result"]["structuredContent"]
        self.assertEqual((end["done"], end["reward"]), (True, 1.0))
        self.assertEqual(self.rpc("openenv/session/close", {"session_id": sid})["result"], {"session_id": sid, "closed": True})
        gone = self.rpc("tools/call", {"session_id": sid, "name": "get_stock", "arguments": {"item": item}})
        self.assertEqual(gone["error"]["code"], -32602)
        self.assertEqual(self.rpc("openenv/session/close", {"session_id": sid})["error"]["code"], -32602)

    def test_json_rpc_errors_have_openenv_codes(self) -> None:
        self.assertEqual(self.rpc("tools/frobnicate", {})["error"]["code"], -32601)
        self.assertEqual(self.rpc("tools/call", {"name": "get_stock"})["error"]["code"], -32602)  # no session_id
        self.assertEqual(self.rpc("openenv/session/close", {})["error"]["code"], -32602)
        status, answer = http("POST", f"/openenv/key/{SHARED.token}/mcp", {"jsonrpc": "1.0", "method": "tools/list", "id": 7})
        self.assertEqual((status, answer["error"]["code"], answer["id"]), (200, -32600, 7))
        req = urllib.request.Request(f"{SHARED.url}/openenv/key/{SHARED.token}/mcp", data=b"{nope", method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as res:
            self.assertEqual(json.loads(res.read())["error"]["code"], -32700)
        failed = self.rpc("openenv/session/create", {"task_id": "0" * 64})
        self.assertEqual(failed["error"]["code"], -32000)
        self.assertEqual(http("POST", "/openenv/mcp", {"jsonrpc": "2.0", "method": "tools/list"})[0], 401)

    def test_websocket_mcp_endpoint_and_ws_mcp_message(self) -> None:
        async def main() -> None:
            ws = await WebSocket.connect(base().replace("http://", "ws://") + "/mcp")
            try:
                async def rpc(method: str, params: Dict[str, Any]) -> Dict[str, Any]:
                    await ws.send_text(json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": "x"}))
                    return json.loads(await ws.recv())
                # No episode yet: the control tools only; the reset tool starts one.
                self.assertEqual([t["name"] for t in (await rpc("tools/list", {}))["result"]["tools"]], ["reset", "message", "finish"])
                early = (await rpc("tools/call", {"name": "finish"}))["result"]
                self.assertEqual((early["isError"], early["structuredContent"]["error"]["code"]), (True, "EPISODE_NOT_FOUND"))
                await rpc("tools/call", {"name": "reset", "arguments": {"seed": 1, "domain": "null"}})
                self.assertIn("noop", [t["name"] for t in (await rpc("tools/list", {}))["result"]["tools"]])
                own = (await rpc("openenv/session/create", {}))["result"]["session_id"]
                self.assertEqual((await rpc("openenv/session/close", {"session_id": own}))["error"]["code"], -32600)
                await ws.send_text("[")
                self.assertEqual(json.loads(await ws.recv())["error"]["code"], -32700)
            finally:
                await ws.close()

            ws = await WebSocket.connect(base().replace("http://", "ws://") + "/ws")
            try:
                async def call(message: Dict[str, Any]) -> Dict[str, Any]:
                    await ws.send_text(json.dumps(message))
                    return json.loads(await ws.recv())
                await call({"type": "reset", "data": {"seed": 3, "domain": "null"}})
                answer = await call({"type": "mcp", "data": {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "noop", "arguments": {}}, "id": 9}})
                self.assertEqual((answer["type"], answer["data"]["id"], answer["data"]["result"]["isError"]), ("mcp", 9, False))
                self.assertEqual((await call({"type": "state"}))["data"]["step_count"], 1)  # the MCP call was a step of this session
                # OpenEnv's call_tool answers as its CallToolObservation: tool_name, result.data; a tool's error in result.error.
                r = (await call({"type": "step", "data": {"type": "call_tool", "tool_name": "noop", "arguments": {"x": 1}}}))["data"]["observation"]
                self.assertEqual((r["tool_name"], r["result"]["is_error"], r["result"]["error"]["code"]), ("noop", True, "INVALID_ACTION"))
                self.assertNotIn("error", r)
                self.assertEqual((await call({"type": "mcp"}))["data"]["code"], "VALIDATION_ERROR")
            finally:
                await ws.close()
        run(main())


class OpenEnvWebSocket(unittest.TestCase):
    def test_session_messages(self) -> None:
        async def main() -> None:
            ws = await WebSocket.connect(base().replace("http://", "ws://") + "/ws")
            try:
                async def call(message: Dict[str, Any]) -> Dict[str, Any]:
                    await ws.send_text(json.dumps(message))
                    return json.loads(await ws.recv())
                answer = await call({"type": "step", "data": {"type": "finish"}})
                self.assertEqual((answer["type"], answer["data"]["code"]), ("error", "EXECUTION_ERROR"))
                await ws.send_text("{not json")
                self.assertEqual(json.loads(await ws.recv())["data"]["code"], "INVALID_JSON")
                self.assertEqual((await call({"type": "dance"}))["data"]["code"], "UNKNOWN_TYPE")
                self.assertEqual((await call({"type": "state", "extra": 1}))["data"]["code"], "VALIDATION_ERROR")
                bad = await call({"type": "reset", "data": {"level": "high"}})
                self.assertEqual((bad["data"]["code"], bad["data"]["errors"][0]["loc"]), ("VALIDATION_ERROR", ["level"]))
                reset = await call({"type": "reset", "data": {"seed": 5, "domain": "inventory", "task_type": "restock"}})
                self.assertEqual(reset["type"], "observation")
                self.assertEqual(set(reset["data"]), {"observation", "reward", "done"})
                text = reset["data"]["observation"]["text"]
                item, amount = restock_goal(text)
                tools = await call({"type": "step", "data": {"type": "list_tools"}})
                self.assertIn("add_stock", [t["name"] for t in tools["data"]["observation"]["tools"]])
                r = await call({"type": "step", "data": {"type": "call_tool", "tool_name": "get_stock", "arguments": {"item": item}}})
                quantity = r["data"]["observation"]["output"]["quantity"]
                await call({"type": "step", "data": tool("add_stock", item=item, quantity=amount)})
                await call({"type": "step", "data": message(f"{item} now has {quantity + amount} units.")})
                end = await call({"type": "step", "data": finish()})
                self.assertEqual((end["data"]["done"], end["data"]["reward"]), (True, 1.0))
                state = await call({"type": "state"})
                self.assertEqual((state["type"], state["data"]["step_count"], state["data"]["status"]), ("state", 4, "terminated"))
                after = await call({"type": "step", "data": finish()})
                self.assertEqual(after["data"]["problem"]["code"], "EPISODE_FINISHED")
                await ws.send_text(json.dumps({"type": "close"}))
                with self.assertRaises(Exception):
                    await ws.recv()
                self.assertEqual(ws.close_code, 1000)
            finally:
                await ws.close()
        run(main())

    def test_client_class_with_header_auth_and_bad_token(self) -> None:
        async def main() -> None:
            async with OpenEnvSession(f"{SHARED.url}/openenv", token=SHARED.token) as env:
                result = await env.reset(seed=2, domain="inventory")
                self.assertFalse(result.done)
                self.assertEqual(result.metadata["task"]["seed"], 2)
                result = await env.step({"type": "finish"})
                self.assertTrue(result.done)
                self.assertEqual(result.reward, 0.0)
            with self.assertRaises(UnauthorizedError):
                await OpenEnvSession(f"{SHARED.url}/openenv", token="wrong-token-wrong-token").connect()
        run(main())

    def test_calls_that_overlap_before_the_connection_is_open_share_one(self) -> None:
        async def main() -> None:
            opened: List[WebSocket] = []
            real = WebSocket.connect

            async def counting(*args: Any, **kwargs: Any) -> WebSocket:
                ws = await real(*args, **kwargs)
                opened.append(ws)
                return ws

            with unittest.mock.patch.object(WebSocket, "connect", counting):
                env = OpenEnvSession(base())
                try:
                    # The reset and the state go out together on a session not connected yet: one connection,
                    # so the state is the reset episode's (on a second connection it would be a session without one).
                    result, state = await asyncio.gather(env.reset(seed=3, domain="null"), env.state())
                    self.assertEqual(len(opened), 1)
                    self.assertEqual((state["episode_id"], state["step_count"]), (result.observation["metadata"]["episode_id"], 0))
                finally:
                    await env.close()
                self.assertEqual(opened[0].close_code, 1000)

                # Closed while it connects: the connection is closed once open, and the call says the session closed.
                env = OpenEnvSession(base())
                pending = asyncio.ensure_future(env.state())
                await asyncio.sleep(0)
                await env.close()
                with self.assertRaises(OpenEnvError):
                    await pending
                self.assertEqual(len(opened), 2)
                self.assertEqual(opened[1].close_code, 1000)
        run(main())

    def test_capacity_reached_is_reported_then_closed(self) -> None:
        async def main() -> None:
            sessions: List[OpenEnvSession] = []
            caught: Optional[CapacityReachedError] = None
            try:
                # Open sessions one by one until the server refuses one (a session of an earlier test may still
                # be closing on the server side, so the count opened here may be a little under the limit).
                for _ in range(MAX_SESSIONS + 1):
                    s = OpenEnvSession(base())
                    try:
                        await s.reset(seed=0, domain="null")
                    except CapacityReachedError as error:
                        caught = error
                        await s.close()
                        break
                    sessions.append(s)
                self.assertIsNotNone(caught)
                assert caught is not None
                self.assertEqual((caught.data["active_sessions"], caught.data["max_sessions"]), (MAX_SESSIONS, MAX_SESSIONS))
                self.assertGreaterEqual(len(sessions), MAX_SESSIONS - 4)
                self.assertLessEqual(len(sessions), MAX_SESSIONS)
            finally:
                for s in sessions:
                    await s.close()
            # Closed sessions free their slots.
            for _ in range(50):
                try:
                    async with OpenEnvSession(base()) as again:
                        result = await again.reset(seed=1, domain="null")
                    break
                except CapacityReachedError:
                    await asyncio.sleep(0.1)
            self.assertEqual(result.observation["kind"], "reset")
        run(main())

    def test_concurrent_sessions_run_episodes(self) -> None:
        async def one(i: int) -> float:
            async with OpenEnvSession(base()) as env:
                await env.reset(seed=i, domain="null")
                await env.step({"type": "tool", "tool": "noop", "args": {}})
                result = await env.step({"type": "finish"})
                self.assertTrue(result.done)
                return float(result.reward or 0)
        n = MAX_SESSIONS // 2  # headroom: sessions of the capacity test may still be closing on the server side

        async def main() -> List[float]:
            return await asyncio.gather(*(one(i) for i in range(n)))
        rewards = run(main())
        self.assertEqual(len(rewards), n)
        self.assertTrue(all(r == 1.0 for r in rewards), rewards)


class AsyncClientScale(unittest.TestCase):
    def test_thousand_concurrent_episodes_without_errors(self) -> None:
        n = 1000

        async def main() -> Tuple[int, List[Any], int]:
            async with AsyncClient(SHARED.url, SHARED.token, max_connections=32) as client:
                created = await asyncio.gather(*(client.make(domain="null", seed=i) for i in range(n)), return_exceptions=True)
                envs = [e for e in created if not isinstance(e, BaseException)]
                open_now = (await client.health())["episodes"]

                async def play(env: Any) -> Tuple[bool, float]:
                    await env.step(tool("noop"))
                    _, reward, terminated, truncated, _ = await env.step(finish())
                    await env.close()
                    return terminated, reward
                played = await asyncio.gather(*(play(e) for e in envs), return_exceptions=True)
                errors = [x for x in list(created) + list(played) if isinstance(x, BaseException)]
                self.assertLessEqual(client.open_connections, 32)
                return open_now, played, len(errors)
        open_now, played, errors = run(main())
        self.assertEqual(errors, 0)
        self.assertGreaterEqual(open_now, n)
        self.assertEqual(len(played), n)
        self.assertTrue(all(t and r == 1.0 for t, r in played))


class GrpoGroups(unittest.TestCase):
    def test_members_share_task_and_seed_and_the_curriculum_counts_the_group_once(self) -> None:
        CLIENT.use_curriculum("learnability")
        before = CLIENT.curriculum()["stats"]["inventory/restock"]

        async def main() -> Tuple[List[Any], Dict[str, Any], Dict[str, Any]]:
            async with AsyncClient(SHARED.url, SHARED.token) as client:
                members = await asyncio.gather(*(client.join_group("g-share", 4, domain="inventory", task_type="restock") for _ in range(4)))
                with self.assertRaises(StoreConflictError):
                    await client.join_group("g-share", 4, domain="inventory", task_type="restock")
                with self.assertRaises(InvalidParamsError) as caught:
                    await client.join_group("g-other", 4, domain="inventory")
                    await client.join_group("g-other", 3, domain="inventory")
                self.assertEqual(caught.exception.pointer, "/size")
                # Two members solve the task, two give up: a group with variance.
                for i, env in enumerate(members):
                    obs, _ = env.pending
                    if i < 2:
                        item, amount = restock_goal(obs["text"])
                        out, *_ = await env.step(tool("get_stock", item=item))
                        await env.step(tool("add_stock", item=item, quantity=amount))
                        await env.step(message(f"{item} now has {out['output']['quantity'] + amount} units."))
                    if i < 3:
                        await env.step(finish())
                pending = await client.group("g-share")
                mid = CLIENT.curriculum()["stats"]["inventory/restock"]
                await members[3].step(finish())
                done = await client.group("g-share")
                return members, pending, {"done": done, "mid": mid}
        members, pending, out = run(main())
        tasks = {m.task["id"] for m in members}
        seeds = {m.info["seed"] for m in members}
        self.assertEqual(len(tasks), 1)
        self.assertEqual(len(seeds), 1)
        self.assertEqual(len({m.id for m in members}), 4)
        self.assertFalse(pending["done"])
        self.assertEqual(out["mid"], before)  # nothing reached the curriculum before the last member ended
        group = out["done"]
        self.assertTrue(group["done"])
        self.assertEqual([r["success"] for r in group["results"]], [1, 1, 0, 0])
        self.assertAlmostEqual(group["stats"]["variance"], 0.25)
        self.assertFalse(group["stats"]["zeroVariance"])
        self.assertEqual(group["update"]["counted"], 4)
        after = CLIENT.curriculum()["stats"]["inventory/restock"]
        self.assertNotEqual(after, before)
        self.assertEqual([w["slice"] for w in group["update"]["weights"]], ["inventory/restock"])  # learnability re-weighted the slice, once

    def test_zero_variance_groups_are_reported_and_skipped_on_request(self) -> None:
        CLIENT.use_curriculum("threshold")
        before_report = CLIENT.request("GET", "/v1/groups")["slices"].get("inventory/clearance", {"groups": 0, "zeroVariance": 0, "skipped": 0})

        async def main() -> Tuple[Dict[str, Any], Dict[str, Any]]:
            async with AsyncClient(SHARED.url, SHARED.token) as client:
                for gid, skip in (("g-zero-skip", True), ("g-zero-keep", False)):
                    members = await asyncio.gather(*(client.join_group(gid, 3, domain="inventory", task_type="clearance", skip_zero_variance=skip) for _ in range(3)))
                    for env in members:
                        await env.step(finish())  # all fail: zero variance
                return await client.group("g-zero-skip"), await client.group("g-zero-keep")
        skipped, kept = run(main())
        self.assertTrue(skipped["stats"]["zeroVariance"] and skipped["stats"]["allFail"])
        self.assertTrue(skipped["skipped"])
        self.assertNotIn("update", skipped)
        self.assertFalse(kept["skipped"])
        self.assertEqual(kept["update"]["counted"], 3)
        report = CLIENT.request("GET", "/v1/groups")["slices"]["inventory/clearance"]
        self.assertEqual(report["groups"] - before_report["groups"], 2)
        self.assertEqual(report["zeroVariance"] - before_report["zeroVariance"], 2)
        self.assertEqual(report["skipped"] - before_report["skipped"], 1)

    def test_groups_over_openenv_websocket(self) -> None:
        async def main() -> List[Any]:
            sessions = [await OpenEnvSession(base()).connect() for _ in range(2)]
            try:
                return [await s.reset(domain="inventory", group_id="g-ws", group_size=2) for s in sessions]
            finally:
                for s in sessions:
                    await s.close()
        a, b = run(main())
        self.assertEqual(a.metadata["task"]["id"], b.metadata["task"]["id"])
        self.assertEqual(a.metadata["task"]["seed"], b.metadata["task"]["seed"])
        self.assertEqual(a.metadata["group"], {"id": "g-ws", "size": 2, "members": 1})
        self.assertEqual(b.metadata["group"]["members"], 2)
        # The server closes a session's episode once it has seen the socket close (just after the client returns).
        for _ in range(100):
            group = CLIENT.request("GET", "/v1/groups/g-ws")["group"]
            if group["done"]:
                break
            time.sleep(0.05)
        self.assertTrue(group["done"])  # both members were closed: excluded results, the group is complete
        self.assertEqual(group["stats"]["counted"], 0)

        async def finished() -> List[Any]:
            sessions = [await OpenEnvSession(base()).connect() for _ in range(2)]
            try:
                for s in sessions:
                    await s.reset(domain="inventory", group_id="g-ws-end", group_size=2)
                return [await s.step(finish()) for s in sessions]
            finally:
                for s in sessions:
                    await s.close()
        first, last = run(finished())
        self.assertNotIn("done", first.metadata["group"])
        self.assertTrue(last.metadata["group"]["done"])
        self.assertEqual((last.metadata["group"]["stats"]["counted"], last.metadata["group"]["stats"]["allFail"]), (2, True))
        self.assertFalse(last.metadata["group"]["skipped"])


class TrainerData(unittest.TestCase):
    def test_shaping_rewards_per_step_and_chat_rollouts(self) -> None:
        env = CLIENT.make(domain="inventory", task_type="restock", seed=3, dynamics={"shaping": {"OFF_PATH": -0.25}})
        obs, _ = env.pending
        item, amount = restock_goal(obs["text"])
        _, reward, _, _, info = env.step(tool("list_items"))
        self.assertIn("OFF_PATH", [f["code"] for f in info["feedback"]])
        self.assertEqual((info["shaping"], reward), (-0.25, -0.25))
        out, *_ = env.step(tool("get_stock", item=item))
        env.step(tool("add_stock", item=item, quantity=amount))
        env.step(message(f"{item} now has {out['output']['quantity'] + amount} units."))
        env.step(finish())
        chat = CLIENT.request("GET", f"/v1/episodes/{env.id}/chat", token=env.token)
        roles = [m["role"] for m in chat["messages"]]
        self.assertEqual(roles[0] if roles[0] == "user" else roles[1], "user")
        calls = [m for m in chat["messages"] if m["role"] == "assistant" and m.get("tool_calls")]
        self.assertEqual([c["tool_calls"][0]["function"]["name"] for c in calls], ["list_items", "get_stock", "add_stock"])
        self.assertEqual(json.loads(calls[2]["tool_calls"][0]["function"]["arguments"]), {"item": item, "quantity": amount})
        tool_msgs = [m for m in chat["messages"] if m["role"] == "tool"]
        self.assertEqual([m["tool_call_id"] for m in tool_msgs], [c["tool_calls"][0]["id"] for c in calls])
        self.assertIn("add_stock", [t["function"]["name"] for t in chat["tools"]])
        self.assertEqual(len(chat["rewards"]), 5)
        self.assertEqual(chat["rewards"][0], -0.25)
        self.assertAlmostEqual(chat["reward"], sum(chat["rewards"]))
        self.assertEqual((chat["outcome"], chat["terminated"]), (1, True))
        self.assertIn(obs["text"], [m["content"] for m in chat["messages"] if m["role"] == "user"])
        env.close()


if __name__ == "__main__":
    unittest.main()
