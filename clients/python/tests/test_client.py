"""The Python client against a real ``envharness serve`` process (started once for the module)."""

from __future__ import annotations

import re
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from envharness_client import (  # noqa: E402
    Client,
    DomainNotFoundError,
    EnvHarnessError,
    EpisodeFinishedError,
    EpisodeNotFoundError,
    IdempotencyConflictError,
    InvalidParamsError,
    RunNotFoundError,
    StoreConflictError,
    TaskNotFoundError,
    UnauthorizedError,
    finish,
    message,
    tool,
)
from tests.server import SharedServer  # noqa: E402

SHARED = SharedServer()
CLIENT: Client


def setUpModule() -> None:
    global CLIENT
    CLIENT = SHARED.start()


def tearDownModule() -> None:
    SHARED.stop()


def solve_restock(env, obs):  # type: ignore[no-untyped-def]
    """A scripted agent for inventory/restock: check, add, report, finish."""
    amount, item = re.search(r"add (\d+) units of (\S+?) and", obs["text"]).groups()  # type: ignore[union-attr]
    obs, reward, terminated, truncated, info = env.step(tool("get_stock", item=item))
    quantity = obs["output"]["quantity"]
    env.step(tool("add_stock", item=item, quantity=int(amount)))
    env.step(message(f"Done: {item} now has {quantity + int(amount)} units."))
    return env.step(finish())


def chain_sum(text: str) -> str:
    tokens = re.search(r"What is (.+)\?", text).group(1).split()  # type: ignore[union-attr]
    total = int(tokens[0])
    for op, value in zip(tokens[1::2], tokens[2::2]):
        total = total + int(value) if op == "+" else total - int(value)
    return str(total)


class GymnasiumLoop(unittest.TestCase):
    def test_restock_episodes_reach_full_reward(self) -> None:
        env = CLIENT.make(domain="inventory", task_type="restock")
        with env:
            for seed in range(3):
                obs, info = env.reset(seed=seed)
                self.assertEqual(obs["kind"], "reset")
                self.assertEqual(info["seed"], seed)
                self.assertEqual(info["slice"], "inventory/restock")
                self.assertIn("get_stock", [t["name"] for t in obs["tools"]])
                obs, reward, terminated, truncated, info = solve_restock(env, obs)
                self.assertTrue(terminated)
                self.assertFalse(truncated)
                self.assertEqual(reward, 1.0)
                self.assertEqual(info["outcome"], 1)
                self.assertEqual(env.result()["success"], 1.0)
                self.assertEqual(env.result()["slice"], "inventory/restock")
        with self.assertRaises(EpisodeNotFoundError):
            env.reset(seed=0)

    def test_math_answers(self) -> None:
        env = CLIENT.make(domain="math", seed=5)
        obs, info = env.pending  # type: ignore[misc]
        results = []
        for seed in range(5):
            if seed > 0:
                obs, info = env.reset(seed=seed)
            obs, reward, terminated, truncated, info = env.step(finish(chain_sum(obs["text"])))
            self.assertEqual((reward, terminated, truncated), (1.0, True, False))
            results.append(env.result())
        self.assertEqual(len({r["taskId"] for r in results}) > 1, True)
        env.close()

    def test_retail_when_built_in(self) -> None:
        try:
            env = CLIENT.make(domain="retail", split="regression")
        except (DomainNotFoundError, EnvHarnessError) as error:
            self.skipTest(f"no retail tasks on this server: {error}")
        with env:
            obs, info = env.reset(seed=0)
            self.assertEqual(info["domain"], "retail")
            self.assertIn("find_user_id_by_email", [t["name"] for t in obs["tools"]])
            obs, reward, terminated, truncated, info = env.step(tool("list_all_product_types"))
            self.assertEqual(obs["kind"], "tool")
            self.assertFalse(terminated)

    def test_agent_mistakes_are_observations(self) -> None:
        env = CLIENT.make(domain="inventory", task_type="restock", seed=1)
        obs, reward, terminated, truncated, info = env.step(tool("no_such_tool"))
        self.assertEqual(obs["error"]["code"], "INVALID_ACTION")
        self.assertEqual(obs["error"]["pointer"], "/tool")
        self.assertEqual(info["feedback"][0]["code"], "INVALID_ACTION")
        obs, *_ = env.step({"type": "tool", "tool": "get_stock", "args": {"item": 3}})
        self.assertEqual(obs["error"]["pointer"], "/args/item")
        obs, *_ = env.step({"type": "dance"})
        self.assertEqual(obs["error"]["pointer"], "/type")
        self.assertEqual(env.state()["episode"]["steps"], 3)
        env.close()

    def test_order_of_calls_is_enforced(self) -> None:
        env = CLIENT.make(domain="inventory", task_type="restock")
        with self.assertRaises(EpisodeNotFoundError):
            env.step(finish())
        env.reset(seed=0)
        env.step(finish())
        with self.assertRaises(EpisodeFinishedError) as caught:
            env.step(finish())
        self.assertEqual(caught.exception.status, 409)
        env.close()

    def test_state_has_the_committed_transitions(self) -> None:
        env = CLIENT.make(domain="null", seed=0)
        for _ in range(5):
            env.step(tool("noop"))
        state = env.state()
        self.assertEqual([t["step"] for t in state["transitions"]], [1, 2, 3, 4, 5])
        self.assertEqual(state["episode"]["status"], "running")
        env.close()


class Batched(unittest.TestCase):
    def test_step_many(self) -> None:
        envs = [CLIENT.make(domain="null", seed=i) for i in range(16)]
        for _ in range(3):
            results = CLIENT.step_many([(env, tool("noop")) for env in envs])
            self.assertEqual(len(results), 16)
            for obs, reward, terminated, truncated, info in results:  # type: ignore[misc]
                self.assertEqual(obs["kind"], "tool")
                self.assertFalse(terminated or truncated)
        self.assertEqual({env.steps for env in envs}, {3})
        envs[3].close()
        with self.assertRaises(EpisodeNotFoundError) as caught:
            CLIENT.step_many([(env, tool("noop")) for env in envs])
        outcomes = caught.exception.results  # type: ignore[attr-defined]
        self.assertIsInstance(outcomes[3], EpisodeNotFoundError)
        self.assertEqual(sum(1 for o in outcomes if isinstance(o, tuple)), 15)
        mixed = CLIENT.step_many([(envs[0], tool("noop")), (envs[3], tool("noop"))], raise_on_error=False)
        self.assertIsInstance(mixed[0], tuple)
        self.assertIsInstance(mixed[1], EpisodeNotFoundError)
        for env in envs:
            env.close()


class Errors(unittest.TestCase):
    def test_typed_exceptions(self) -> None:
        with Client(SHARED.url, "wrong-token-0123456789") as stranger, self.assertRaises(UnauthorizedError):
            stranger.health()
        with self.assertRaises(TaskNotFoundError):
            CLIENT.make(task_id="0" * 64)
        with self.assertRaises(DomainNotFoundError):
            CLIENT.make(domain="nowhere")
        with self.assertRaises(InvalidParamsError) as caught:
            CLIENT.make(task_id="0" * 64, level=2)
        self.assertEqual(caught.exception.pointer, "/level")
        with self.assertRaises(RunNotFoundError):
            CLIENT.get_run("nope")

    def test_another_episodes_token_is_not_found(self) -> None:
        victim = CLIENT.make(domain="null", seed=0)
        thief = CLIENT.make(domain="null", seed=0)
        thief.id = victim.id
        with self.assertRaises(EpisodeNotFoundError):
            thief.step(tool("noop"))
        self.assertEqual(victim.state()["episode"]["steps"], 0)
        victim.close()

    def test_idempotency_and_expected_step(self) -> None:
        env = CLIENT.make(domain="null", seed=0)
        path = f"/v1/episodes/{env.id}/step"
        headers = {"Idempotency-Key": "py-key-1"}
        body = {"action": tool("noop"), "expectedStep": 1}
        first = CLIENT._exchange("POST", path, body, env.token, headers, True)
        again = CLIENT._exchange("POST", path, body, env.token, headers, True)
        self.assertEqual(first[1], again[1])
        self.assertEqual(again[2].get("idempotent-replayed"), "true")
        with self.assertRaises(IdempotencyConflictError):
            CLIENT.request("POST", path, {"action": tool("noop"), "expectedStep": 2}, token=env.token, headers=headers)
        with self.assertRaises(StoreConflictError) as caught:
            CLIENT.request("POST", path, body, token=env.token)
        self.assertEqual(caught.exception.pointer, "/expectedStep")
        env.close()

    def test_a_broken_connection_is_retried_without_applying_twice(self) -> None:
        client = Client(SHARED.url, SHARED.token)
        env = client.make(domain="null", seed=0)
        for i in range(5):
            env.step(tool("noop"))
            # The kept-alive socket dies under the client: the next step reconnects and is applied once.
            client._conn.sock.close()  # type: ignore[union-attr]
        self.assertEqual([t["step"] for t in env.state()["transitions"]], [1, 2, 3, 4, 5])
        env.close()
        client.close()


class CurriculumSnapshotsRuns(unittest.TestCase):
    def test_curriculum_snapshot_restore_and_runs(self) -> None:
        state = CLIENT.use_curriculum("threshold", {"threshold": {"minSamples": 2, "patience": 1}})
        self.assertTrue(state["active"])
        self.assertIn("math/arithmetic", state["levels"])
        env = CLIENT.make(seed=0)  # nothing pinned: the curriculum picks the task
        self.assertIn(env.info["slice"], state["levels"])
        env.close()
        update = CLIENT.adjust_difficulty([{"slice": "math/arithmetic", "level": 1, "success": 1.0}] * 4)
        self.assertEqual(update["curriculum"]["levels"]["math/arithmetic"], 2)
        update = CLIENT.update_distribution([{"slice": "inventory/restock", "level": 1, "success": 0.0}] * 4)
        self.assertIn("weights", update["update"])
        self.assertEqual(CLIENT.curriculum()["strategy"], "threshold")

        snap = CLIENT.snapshot(label="py")
        self.assertEqual(CLIENT.get_snapshot(snap["id"])["label"], "py")
        self.assertIn(snap["id"], [s["id"] for s in CLIENT.snapshots()])
        before = [CLIENT.sample_task()["id"] for _ in range(5)]
        CLIENT.restore(snap["id"])
        after = [CLIENT.sample_task()["id"] for _ in range(5)]
        self.assertEqual(before, after)

        run = CLIENT.create_run("py-agent", version="1", config={"lr": 0.1})
        env = CLIENT.make(domain="null", seed=0, run_id=run["id"])
        env.step(finish())
        env.close()
        finished = CLIENT.finish_run(run["id"], summary={"episodes": 1})
        self.assertEqual(finished["status"], "finished")
        self.assertIn(run["id"], [r["id"] for r in CLIENT.runs()])
        self.assertEqual(CLIENT.get_run(run["id"])["run"]["summary"], {"episodes": 1})

    def test_tasks_and_pool(self) -> None:
        task = CLIENT.sample_task(domain="inventory", task_type="clearance", level=2)
        self.assertEqual((task["taskType"], task["level"]), ("clearance", 2))
        self.assertNotIn("solution", task["spec"])
        self.assertIn("solution", CLIENT.get_task(task["id"], full=True)["spec"])
        self.assertGreater(CLIENT.pool()["total"], 50)
        self.assertIn("inventory/restock@1", [t["id"] for t in CLIENT.templates()])
        self.assertEqual(CLIENT.openapi()["openapi"], "3.1.0")
        self.assertEqual(CLIENT.health()["status"], "ok")


if __name__ == "__main__":
    unittest.main()
