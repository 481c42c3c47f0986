"""Each trainer adapter against its contract as the trainer's code states it, and a real run of >= 32 episodes
through it against a real ``envharness serve`` (the trainers themselves cannot be installed here: the model and
tokenizer are scripted stand-ins, everything else is real)."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import re
import typing
import unittest
from typing import Any, Dict, Iterator, List, Optional

from envharness_client import Client
from envharness_client.adapters import parse_actions
from envharness_client.adapters.skyrl import EnvHarnessTextEnv
from envharness_client.adapters.trl import EnvHarnessTRLEnv, environment_factory
from envharness_client.adapters.verl import AgentLoopOutput, EnvHarnessAgentLoop, EnvHarnessTool, aclose_clients
from policies import CharTokenizer, RestockModel, ScriptedServerManager, restock_goal
from tests.server import SharedServer

EPISODES = 32
SHARED = SharedServer()
CLIENT: Client


def setUpModule() -> None:
    global CLIENT
    CLIENT = SHARED.start()
    os.environ["ENVHARNESS_URL"] = SHARED.url
    os.environ["ENVHARNESS_TOKEN"] = SHARED.token


def tearDownModule() -> None:
    SHARED.stop()


def google_args(doc: str) -> Dict[str, str]:
    """The ``Args:`` section of a Google-style docstring, as transformers' ``get_json_schema`` reads it."""
    match = re.search(r"\n\s*Args:\s*\n(.*?)(?:\n\s*\n|\n\s*Returns:|\Z)", doc, re.S)
    if match is None:
        return {}
    out: Dict[str, str] = {}
    for line in match.group(1).splitlines():
        m = re.match(r"\s*(\w+)\s*(?:\([^)]*\))?:\s*(.+)", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


class TrlEnvironmentFactory(unittest.TestCase):
    """trl/trainer/grpo_trainer.py: factory() with no arguments; reset(**row) -> str | None; public methods
    other than reset/get_reward are tools (inspect.getmembers(instance, inspect.ismethod)); get_reward() -> float."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.Env = environment_factory(domain="inventory", task_type="restock")

    def test_contract(self) -> None:
        instance = self.Env()  # the trainer calls the factory with no arguments
        names = {n for n, m in inspect.getmembers(instance, predicate=inspect.ismethod) if not n.startswith("_")}
        self.assertEqual(names - {"reset", "get_reward"}, {"list_items", "get_stock", "add_stock", "remove_stock", "delete_item", "send_message"})
        spec = {t["name"]: t for t in CLIENT.make(domain="inventory", seed=0).pending[0]["tools"]}
        for name in names - {"reset", "get_reward", "send_message"}:
            method = getattr(instance, name)
            hints = typing.get_type_hints(method)
            params = [p for p in inspect.signature(method).parameters]
            schema = spec[name]["parameters"]
            self.assertEqual(set(params), set(schema.get("properties", {})), name)
            self.assertEqual(hints.pop("return"), str)
            for p in params:  # every argument has a type hint and an Args: entry (get_json_schema requires both)
                self.assertIn(p, hints)
                self.assertIn(p, google_args(method.__doc__ or ""), f"{name}.{p}")
                if p in schema.get("required", []):
                    self.assertIs(inspect.signature(method).parameters[p].default, inspect.Parameter.empty)
            self.assertEqual((method.__doc__ or "").split("\n")[0], spec[name]["description"])
        self.assertEqual(google_args(EnvHarnessTRLEnv.__dict__["_send_message"].__doc__), {"text": "what to tell the user"})
        self.assertEqual(typing.get_type_hints(instance.add_stock)["quantity"], int)
        text = instance.reset(prompt=[{"role": "user", "content": "restock"}], seed=7)  # the row's extra fields are ignored
        self.assertIsInstance(text, str)
        self.assertIn("units of", text)
        self.assertEqual(instance.episode.info["seed"], 7)
        reward = instance.get_reward()  # finishes the unsolved episode
        self.assertIsInstance(reward, float)
        self.assertEqual(reward, 0.0)
        with self.assertRaisesRegex(ValueError, "the episode has ended"):  # TRL returns the message to the model
            instance.get_stock(item="x")
        instance._close()

    def test_thirty_two_episodes(self) -> None:
        pool = [self.Env() for _ in range(4)]  # the trainer pools instances and resets them
        rewards: List[float] = []
        for i in range(EPISODES):
            env = pool[i % 4]
            text = env.reset(seed=100 + i, prompt="ignored")
            item, amount = restock_goal(text)
            quantity = json.loads(env.get_stock(item=item))["quantity"]
            out = json.loads(env.add_stock(item=item, quantity=amount + (i % 2)))  # odd episodes add one too many
            self.assertEqual(out["quantity"], quantity + amount + (i % 2))
            reply = env.send_message(text=f"{item} now has {out['quantity']} units.")
            self.assertIsInstance(reply, str)
            rewards.append(env.get_reward())
            self.assertEqual(env.reward, rewards[-1])
            self.assertEqual(env.get_reward(), rewards[-1])  # the accessor is stable once the episode ended
        for env in pool:
            env._close()
        self.assertEqual(rewards, [1.0 if i % 2 == 0 else 0.0 for i in range(EPISODES)])

    def test_group_rows_over_two_epochs(self) -> None:
        """TRL gives a row's G generations the same kwargs, epoch after epoch: the row's group id names a series."""
        pair = [self.Env(), self.Env()]
        seen = []
        for epoch in range(2):
            texts = [env.reset(prompt="p", group_id="trl-row", group_size=2) for env in pair]
            self.assertEqual(texts[0], texts[1])
            ids = {env.episode.task["id"] for env in pair}
            self.assertEqual(len(ids), 1)
            seen.append((ids.pop(), pair[0].episode.info["seed"] == pair[1].episode.info["seed"]))
            for env in pair:
                env.get_reward()
        for env in pair:
            env._close()
        self.assertTrue(all(same_seed for _, same_seed in seen))
        first, second = CLIENT.request("GET", "/v1/groups/trl-row")["group"], CLIENT.request("GET", "/v1/groups/trl-row~1")["group"]
        self.assertTrue(first["done"] and second["done"])
        self.assertEqual((first["taskId"], second["taskId"]), (seen[0][0], seen[1][0]))


class VerlAgentLoop(unittest.TestCase):
    """verl/experimental/agent_loop/agent_loop.py: AgentLoopBase(trainer_config, server_manager, tokenizer, processor,
    dataset_cls, dataset_config); await run(sampling_params, **row) -> AgentLoopOutput(prompt_ids, response_ids,
    response_mask, reward_score, num_turns, metrics); server_manager.generate(request_id, prompt_ids=, sampling_params=)."""

    class Wrap:
        def __init__(self, config: Any) -> None:
            self.config = config

    def loop(self, manager: ScriptedServerManager, tokenizer: CharTokenizer) -> EnvHarnessAgentLoop:
        config = {"actor_rollout_ref": {"rollout": {"response_length": 4096}}}
        return EnvHarnessAgentLoop(self.Wrap(config), manager, tokenizer, None, None, self.Wrap({}))

    def test_contract_ids_masks_reward(self) -> None:
        tokenizer = CharTokenizer()
        manager = ScriptedServerManager(tokenizer)

        async def main() -> AgentLoopOutput:
            try:
                return await self.loop(manager, tokenizer).run({"temperature": 1.0}, raw_prompt=[], extra_info={"domain": "inventory", "task_type": "restock", "seed": 11})
            finally:
                await aclose_clients()
        out = asyncio.run(main())
        self.assertIsInstance(out, AgentLoopOutput)
        self.assertEqual(len(out.response_ids), len(out.response_mask))
        self.assertEqual(len(out.response_logprobs), len(out.response_ids))
        prompt = tokenizer.decode(out.prompt_ids)
        self.assertTrue(prompt.endswith("<|assistant|>"))
        self.assertIn('"name": "add_stock"', prompt)  # the tools went through the chat template
        # Mask 1 spans are exactly the model's turns; mask 0 spans are the environment's messages.
        spans: List[tuple] = []
        for token, m in zip(out.response_ids, out.response_mask):
            if spans and spans[-1][0] == m:
                spans[-1][1].append(token)
            else:
                spans.append((m, [token]))
        model_turns = [tokenizer.decode(t) for m, t in spans if m == 1]
        env_turns = [tokenizer.decode(t) for m, t in spans if m == 0]
        self.assertEqual(len(model_turns), 4)
        self.assertTrue(model_turns[0].startswith("<tool_call>") and "get_stock" in model_turns[0])
        self.assertEqual(model_turns[3], "All done.")
        self.assertEqual(len(env_turns), 3)
        self.assertTrue(env_turns[0].startswith("<|tool|>{"))
        self.assertNotIn(CharTokenizer.SYSTEM, "".join(env_turns))  # verl strips the template's system prompt
        self.assertTrue(env_turns[2].startswith("<|user|>"))
        self.assertEqual(out.reward_score, 1.0)
        self.assertEqual(out.num_turns, 8)
        self.assertEqual(out.extra_fields["envharness"]["rewards"][-1], 1.0)
        # Each generate call saw the whole conversation so far.
        lengths = [n for _, n in manager.calls]
        self.assertEqual(lengths[0], len(out.prompt_ids))
        self.assertTrue(all(b > a for a, b in zip(lengths, lengths[1:])))

    def test_thirty_two_episodes_concurrently_in_groups(self) -> None:
        tokenizer = CharTokenizer()
        manager = ScriptedServerManager(tokenizer)
        loop = self.loop(manager, tokenizer)

        async def main() -> List[AgentLoopOutput]:
            rows = [{"extra_info": {"domain": "inventory", "task_type": "restock", "group_id": f"verl-{i // 4}", "group_size": 4}} for i in range(EPISODES)]
            try:
                return await asyncio.gather(*(loop.run({}, **row) for row in rows))
            finally:
                await aclose_clients()
        outs = asyncio.run(main())
        self.assertEqual(len(outs), EPISODES)
        self.assertTrue(all(o.reward_score == 1.0 for o in outs))
        # The same rows again (a second epoch) form new groups: verl-0~1, ...
        again = asyncio.run(main())
        self.assertTrue(all(o.reward_score == 1.0 for o in again))
        self.assertTrue(CLIENT.request("GET", "/v1/groups/verl-0~1")["group"]["done"])
        for g in range(EPISODES // 4):
            group = CLIENT.request("GET", f"/v1/groups/verl-{g}")["group"]
            self.assertTrue(group["done"])
            self.assertEqual(group["results"], [{"slice": "inventory/restock", "level": group["level"], "success": 1, "taskId": group["taskId"], "excluded": False}] * 4)
            self.assertTrue(group["stats"]["allPass"])


class VerlBaseTool(unittest.TestCase):
    """verl/tools/base_tool.py: create(instance_id=None, **kwargs) -> (id, ToolResponse); execute(id, parameters)
    -> (ToolResponse, step reward, metrics); calc_reward(id) -> float; release(id)."""

    def tools(self) -> Dict[str, EnvHarnessTool]:
        spec = CLIENT.make(domain="inventory", seed=0).pending[0]["tools"]
        return {t["name"]: EnvHarnessTool({}, {"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t["parameters"]}}) for t in spec}

    def test_thirty_two_trajectories(self) -> None:
        tools = self.tools()

        async def trajectory(i: int) -> float:
            kwargs = {"create_kwargs": {"domain": "inventory", "task_type": "restock", "seed": 200 + i, "episode": f"traj-{i}"}}
            get_id, first = await tools["get_stock"].create(**kwargs)
            add_id, second = await tools["add_stock"].create(**kwargs)
            self.assertIn("units of", first.text)
            self.assertIsNone(second.text)  # the second tool joined the same episode
            item, amount = restock_goal(first.text)
            response, reward, metrics = await tools["get_stock"].execute(get_id, {"item": item})
            self.assertEqual((reward, metrics["step"]), (0.0, 1))
            wrong = i % 4 == 0
            response, reward, metrics = await tools["add_stock"].execute(add_id, {"item": item, "quantity": amount + (1 if wrong else 0)})
            self.assertIn("quantity", json.loads(response.text))
            final = await tools["add_stock"].calc_reward(add_id)
            self.assertEqual(await tools["get_stock"].calc_reward(get_id), final)
            await tools["get_stock"].release(get_id)
            await tools["add_stock"].release(add_id)
            return final
        async def main() -> List[float]:
            try:
                return await asyncio.gather(*(trajectory(i) for i in range(EPISODES)))
            finally:
                await aclose_clients()
        rewards = asyncio.run(main())
        # Without the report message the restock task is not accepted: every trajectory scores 0, and says so.
        self.assertEqual(rewards, [0.0] * EPISODES)
        self.assertEqual(EnvHarnessTool._episodes, {})  # released

    def test_reward_when_the_task_is_done(self) -> None:
        tools = self.tools()

        async def main() -> float:
            tid, first = await tools["get_stock"].create(create_kwargs={"domain": "inventory", "task_type": "restock", "seed": 9})
            env = EnvHarnessTool._episodes[tools["get_stock"]._instances[tid]]
            item, amount = restock_goal(first.text)
            out, _, _ = await tools["get_stock"].execute(tid, {"item": item})
            await env.step({"type": "tool", "tool": "add_stock", "args": {"item": item, "quantity": amount}})
            await env.step({"type": "message", "text": f"{item} now has {json.loads(out.text)['quantity'] + amount} units."})
            reward = await tools["get_stock"].calc_reward(tid)
            await tools["get_stock"].release(tid)
            await aclose_clients()
            return reward
        self.assertEqual(asyncio.run(main()), 1.0)


@contextlib.contextmanager
def server_env(url: Optional[str], token: Optional[str]) -> Iterator[None]:
    """ENVHARNESS_URL/ENVHARNESS_TOKEN set to these values (unset for None) inside the block, restored after."""
    names = ("ENVHARNESS_URL", "ENVHARNESS_TOKEN")
    saved = {k: os.environ.get(k) for k in names}
    try:
        for k, v in zip(names, (url, token)):
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class SkyrlTextEnv(unittest.TestCase):
    """skyrl_gym/envs/base_text_env.py: EnvClass(env_config, extras); init(prompt) -> (prompt, metadata);
    step(action: str) -> {observations: [messages], reward, done, metadata}; close()."""

    def test_contract_and_thirty_two_episodes(self) -> None:
        rewards: List[float] = []
        for i in range(EPISODES):
            env = EnvHarnessTextEnv({"url": SHARED.url, "token": SHARED.token}, {"domain": "inventory", "task_type": "restock", "seed": 300 + i})
            prompt, meta = env.init([{"role": "user", "content": "Solve the task."}])
            self.assertEqual(prompt[0]["role"], "system")  # the domain's policy
            self.assertEqual(prompt[1], {"role": "user", "content": "Solve the task."})
            self.assertEqual(prompt[-1]["role"], "user")
            self.assertIn("get_stock", json.dumps(meta["tools"]))
            model = RestockModel(prompt[-1]["content"], wrong=i % 3 == 0)
            last = None
            total = 0.0
            while True:
                out = env.step(model.next(last))
                self.assertEqual(set(out), {"observations", "reward", "done", "metadata"})
                self.assertIsInstance(out["reward"], float)
                total += out["reward"]
                if out["done"]:
                    self.assertEqual(out["observations"], [])
                    break
                self.assertEqual([m["role"] for m in out["observations"]], ["user"])
                last = out["observations"][0]["content"]
            self.assertEqual(env.get_metrics()["reward"], total)
            rewards.append(total)
            env.close()
        self.assertEqual(rewards, [0.0 if i % 3 == 0 else 1.0 for i in range(EPISODES)])

    def test_made_as_skyrl_makes_it(self) -> None:
        """SkyRL a9564572's generator: ``skyrl_gym.make(env_class, env_config=getattr(cfg.environment.skyrl_gym,
        env_class, dict()), extras={**row without prompt/env_class, "max_turns": generator.max_turns})``. Its typed
        config has no ``envharness`` field, so ``env_config`` is ``{}`` and the server comes from the environment
        variables the entrypoint sets (docs/trainers.md, SkyRL)."""
        row = {"prompt": [{"role": "user", "content": "Solve the task."}], "env_class": "envharness",
               "domain": "inventory", "task_type": "restock", "seed": 977}
        extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
        with server_env(None, None):
            with self.assertRaisesRegex(ValueError, "ENVHARNESS_URL"):
                EnvHarnessTextEnv(env_config={}, extras=extras)
        with server_env(SHARED.url, SHARED.token):
            env = EnvHarnessTextEnv(env_config={}, extras={**extras, "max_turns": 6})
        self.assertEqual(env.max_turns, 6)
        prompt, _ = env.init(row["prompt"])
        model = RestockModel(prompt[-1]["content"], wrong=False)
        last, total = None, 0.0
        while True:
            out = env.step(model.next(last))
            total += out["reward"]
            if out["done"]:
                break
            last = out["observations"][0]["content"]
        self.assertEqual(total, 1.0)
        env.close()

    def test_group_extras(self) -> None:
        envs = [EnvHarnessTextEnv({"url": SHARED.url, "token": SHARED.token}, {"extra_info": {"domain": "inventory", "group_id": "sky-g", "group_size": 2}}) for _ in range(2)]
        metas = [env.init([])[1] for env in envs]
        self.assertEqual(metas[0]["task_id"], metas[1]["task_id"])
        for env in envs:
            self.assertTrue(env.step("I give up.")["done"])
            env.close()
        group = CLIENT.request("GET", "/v1/groups/sky-g")["group"]
        self.assertTrue(group["done"])
        self.assertEqual(group["taskId"], metas[0]["task_id"])

    def test_parse_actions(self) -> None:
        self.assertEqual(parse_actions('<tool_call>{"name": "a", "arguments": "{\\"x\\": 1}"}</tool_call> then <message>hi</message>'),
                         [{"type": "tool", "tool": "a", "args": {"x": 1}}, {"type": "message", "text": "hi"}])
        self.assertEqual(parse_actions("  42 "), [{"type": "finish", "answer": "42"}])
        self.assertEqual(parse_actions("<tool_call>{oops</tool_call>")[0]["tool"], "")


if __name__ == "__main__":
    unittest.main()
