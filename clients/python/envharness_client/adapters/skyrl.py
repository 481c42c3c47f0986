"""SkyRL ``BaseTextEnv`` adapter.

Shaped to NovaSky-AI/SkyRL skyrl-gym 0.4.0 (commit a956457, ``skyrl_gym/envs/base_text_env.py``): constructed as
``EnvClass(env_config, extras)`` by ``skyrl_gym.make``; ``init(prompt) -> (prompt, metadata)``;
``step(action: str) -> BaseTextEnvStepOutput`` (``observations`` as OpenAI messages, ``reward``, ``done``,
``metadata``); ``close()``. When skyrl_gym is importable the class subclasses its ``BaseTextEnv``.

Register it: ``skyrl_gym.envs.register(id="envharness", entry_point="envharness_client.adapters.skyrl:EnvHarnessTextEnv")``;
dataset rows use ``env_class: envharness`` and carry ``task_id`` or ``domain``/``level``, ``seed`` (and ``group_id``/
``group_size``) in their extras; ``env_config`` may hold ``url``/``token`` (else ``ENVHARNESS_URL``/``ENVHARNESS_TOKEN``).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

from ..client import Client, Env, finish
from ..errors import EnvHarnessError
from .groups import join_series
from .toolcalls import parse_actions, render_observation, server_from_env, task_selection, tool_schemas

JSON = Dict[str, Any]

try:  # pragma: no cover - SkyRL is not installable on the CI machine
    from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
    HAVE_SKYRL = True
except ImportError:
    HAVE_SKYRL = False

    class BaseTextEnv:  # type: ignore[no-redef]
        """skyrl-gym's ``BaseTextEnv`` attributes (``turns``, ``max_turns``, tool groups)."""

        def __init__(self) -> None:
            self.turns = 0
            self.max_turns = 1
            self.tool_groups: List[Any] = []
            self.tool_to_toolgroup: JSON = {}

        def close(self) -> None:
            pass

        def get_metrics(self) -> JSON:
            return {}

    def BaseTextEnvStepOutput(**kwargs: Any) -> JSON:  # type: ignore[no-redef]  # a TypedDict builds a dict
        return dict(kwargs)


class EnvHarnessTextEnv(BaseTextEnv):
    """One EnvHarness episode per environment instance. The model's text is parsed for ``<tool_call>`` /
    ``<message>`` blocks; text with neither finishes the episode (as its answer). ``metadata`` carries the step
    info (outcome, shaping, feedback codes); ``get_metrics()`` the episode's outcome and steps."""

    def __init__(self, env_config: Any = None, extras: Optional[JSON] = None) -> None:
        super().__init__()
        config = dict(env_config or {}) if not hasattr(env_config, "get") else env_config
        url, token = server_from_env(config.get("url") if config else None, config.get("token") if config else None)
        extras = dict(extras or {})
        nested = extras.get("extra_info") if isinstance(extras.get("extra_info"), dict) else {}
        self._pick = task_selection({**nested, **extras})
        self.max_turns = int((config.get("max_turns") if config else None) or extras.get("max_turns") or 16)
        self._client = Client(url, token)
        self._env: Optional[Env] = None
        self._rewards: List[float] = []
        self._outcome = 0.0

    def init(self, prompt: List[JSON]) -> Tuple[List[JSON], JSON]:
        """Opens the episode; the prompt gains the policy (system) and the task instructions (user)."""
        pick = self._pick
        pinned = pick.get("task_id") is not None
        sample = {} if pinned else {"domain": pick.get("domain"), "task_type": pick.get("task_type"), "level": pick.get("level")}
        if pick.get("group_id") is not None:
            body = {k: v for k, v in {"size": pick.get("group_size"), "taskId": pick.get("task_id"), "seed": pick.get("seed"),
                                      "domain": sample.get("domain"), "taskType": sample.get("task_type"), "level": sample.get("level"),
                                      "skipZeroVariance": pick.get("skip_zero_variance")}.items() if v is not None}
            created, _ = join_series(self._client, str(pick["group_id"]), body)
            self._env = Env(self._client, created["episode"], created["token"])
            self._env._started(created["info"])
            observation = created["observation"]
        else:
            import random
            seed = int(pick["seed"]) if pick.get("seed") is not None else random.SystemRandom().randrange(0, 2**31 - 1)
            self._env = self._client.make(task_id=pick.get("task_id"), seed=seed, **sample)
            observation = self._env.pending[0]  # type: ignore[index]
        self.turns = 0
        self._rewards = []
        tools = observation.get("tools", [])
        messages = [m for m in (prompt or []) if m.get("role") != "system"]
        head: List[JSON] = []
        if observation.get("policy"):
            head.append({"role": "system", "content": observation["policy"]})
        text = observation.get("text", "")
        if tools:
            text += "\n\nTools (call one with <tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>):\n" + json.dumps(tool_schemas(tools))
        return head + messages + [{"role": "user", "content": text}], {"episode_id": self._env.id, "task_id": self._env.task["id"], "tools": tool_schemas(tools)}

    def step(self, action: str) -> Any:
        if self._env is None:
            raise EnvHarnessError("step before init: SkyRL calls init(prompt) first")
        self.turns += 1
        observations: List[JSON] = []
        reward = 0.0
        done = False
        info: JSON = {}
        actions = parse_actions(action)
        if self.turns >= self.max_turns:
            actions = [a for a in actions if a["type"] != "finish"] + [finish()]
        for act in actions:
            obs, r, terminated, truncated, info = self._env.step(act)
            reward += r
            self._rewards.append(r)
            if act["type"] in ("tool", "message"):
                observations.append({"role": "user", "content": render_observation(obs)})
            if terminated or truncated:
                done = True
                self._outcome = float(info.get("outcome", 0.0))
                break
        metadata = {"step": info.get("step"), "outcome": info.get("outcome"), "shaping": info.get("shaping"),
                    "feedback": [f["code"] for f in info.get("feedback", [])], "episode_id": self._env.id}
        return BaseTextEnvStepOutput(observations=[] if done else observations, reward=reward, done=done, metadata=metadata)

    def get_metrics(self) -> JSON:
        return {"outcome": self._outcome, "steps": len(self._rewards), "reward": float(sum(self._rewards))}

    def close(self) -> None:
        if self._env is not None:
            try:
                self._env.close()
            except EnvHarnessError:
                pass
            self._env = None
        self._client.close()
