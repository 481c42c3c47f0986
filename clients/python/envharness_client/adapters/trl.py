"""TRL ``GRPOTrainer(environment_factory=...)`` adapter.

Shaped to huggingface/trl 1.10.0.dev0 (commit f2cd577, ``trl/trainer/grpo_trainer.py``): the trainer calls the
factory with no arguments (one instance per concurrent rollout, pooled and reset), calls ``reset(**row)`` with the
dataset row's fields and appends a returned string to the last user message, exposes every public method except
``reset``/``get_reward`` as a tool (its JSON schema comes from type hints and a Google-style ``Args:`` docstring,
transformers' ``get_json_schema``), and calls ``get_reward()`` once per finished rollout.

>>> from envharness_client.adapters.trl import environment_factory
>>> EnvHarnessEnv = environment_factory("http://127.0.0.1:8787", token, domain="retail")
>>> trainer = GRPOTrainer(model=..., train_dataset=dataset, environment_factory=EnvHarnessEnv, args=GRPOConfig(...))
"""

from __future__ import annotations

import json
import keyword
from typing import Any, Dict, List, Optional

from ..client import Client, finish, tool
from ..errors import EnvHarnessError
from .groups import join_series
from .toolcalls import render_observation, server_from_env, task_selection

JSON = Dict[str, Any]

_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "array": "list", "object": "dict"}


class EnvHarnessTRLEnv:
    """Base of the generated classes: the episode plumbing (all private, so TRL sees only the tools)."""

    _url: str = ""
    _token: str = ""
    _defaults: JSON = {}
    _group_size: Optional[int] = None

    def __init__(self) -> None:
        self._client = Client(self._url, self._token)
        self._env: Any = None
        self._rewards: List[float] = []
        self._done = False
        self._last_info: JSON = {}

    # -- the trainer's interface ---------------------------------------------------------------------

    def reset(self, **kwargs: Any) -> str:
        """Starts a new episode; ``kwargs`` is the dataset row (``task_id``, ``level``, ``seed``, ``group_id``, ... are read, the rest ignored)."""
        self._release()
        pick = dict(self._defaults)
        pick.update(task_selection(kwargs))
        group_id = pick.pop("group_id", None)
        size = pick.pop("group_size", self._group_size)
        skip = pick.pop("skip_zero_variance", None)
        pinned = pick.get("task_id") is not None  # a task id excludes sampling keys
        make = {"domain": None if pinned else pick.get("domain"), "task_type": None if pinned else pick.get("task_type"),
                "level": None if pinned else pick.get("level"), "task_id": pick.get("task_id"), "dynamics": pick.get("dynamics")}
        if group_id is not None:
            if size is None:
                raise ValueError("a group_id needs a group_size (the row's group_size, or environment_factory(group_size=G))")
            body = {k: v for k, v in {"size": size, "domain": make["domain"], "taskType": make["task_type"], "level": make["level"],
                                      "taskId": make["task_id"], "seed": pick.get("seed"), "skipZeroVariance": skip,
                                      "dynamics": make["dynamics"]}.items() if v is not None}
            created, _ = join_series(self._client, str(group_id), body)
            from ..client import Env
            env = Env(self._client, created["episode"], created["token"])
            env._started(created["info"])
            observation = created["observation"]
        else:
            env = self._client.make(seed=int(pick.get("seed", 0)) if "seed" in pick else _fresh_seed(),
                                    split=None if pinned else pick.get("split"), **make)
            observation = env.pending[0]
        self._env = env
        self._rewards = []
        self._done = False
        policy = observation.get("policy")
        text = observation.get("text", "")
        return f"{policy}\n\n{text}" if policy else text

    def get_reward(self) -> float:
        """The episode's reward: the sum of its step rewards (task outcome plus shaping). A running episode is finished first."""
        if self._env is not None and not self._done:
            self._step(finish())
        return float(sum(self._rewards))

    def _send_message(self, text: str) -> str:
        """Sends a message to the user and returns the user's reply.

        Args:
            text: what to tell the user

        Returns:
            The user's reply.
        """
        if self._env is None:
            raise ValueError("the environment has not been reset")
        if self._done:
            raise ValueError("the episode has ended")
        return render_observation(self._step({"type": "message", "text": text}))

    # -- plumbing (private: TRL turns public methods into tools) ------------------------------------------

    def _call(self, name: str, args: JSON) -> str:
        # TRL feeds a tool's exception message back to the model ("the recommended way to signal that the episode has ended").
        if self._env is None:
            raise ValueError("the environment has not been reset")
        if self._done:
            raise ValueError("the episode has ended; no more tool calls")
        observation = self._step(tool(name, **{k: v for k, v in args.items() if v is not None}))
        return render_observation(observation)

    def _step(self, action: JSON) -> JSON:
        observation, reward, terminated, truncated, info = self._env.step(action)
        self._rewards.append(reward)
        self._last_info = info
        self._done = terminated or truncated
        return observation

    def _close(self) -> None:
        """Closes the episode and the connection (TRL keeps instances for the whole run; call this when done)."""
        self._release()
        self._client.close()

    def _release(self) -> None:
        if self._env is not None:
            try:
                self._env.close()
            except EnvHarnessError:
                pass
            self._env = None

    @property
    def episode(self) -> Any:
        """The current ``Env`` (``.id``, ``.task``, ``.state()``), for logging."""
        return self._env

    @property
    def info(self) -> JSON:
        """The last step's info: ``outcome``, ``shaping``, ``feedback``, ``step``, ..."""
        return self._last_info

    @property
    def reward(self) -> float:
        """The reward so far (for TRL's ``reward_func(environments)`` pattern; ``get_reward()`` also finishes the episode)."""
        return float(sum(self._rewards))

    @property
    def rewards(self) -> List[float]:
        """Per-step rewards of the current episode (outcome plus shaping)."""
        return list(self._rewards)


def _fresh_seed() -> int:
    import random
    return random.SystemRandom().randrange(0, 2**31 - 1)


def _tool_method(spec: JSON) -> Any:
    """A method with a real signature and an ``Args:`` docstring built from the tool's JSON schema."""
    name = spec["name"]
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_") or name in ("reset", "get_reward"):
        raise ValueError(f"tool {name!r} cannot be a Python method name")
    parameters = spec.get("parameters") or {}
    props: Dict[str, JSON] = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])
    for arg in props:
        if not arg.isidentifier() or keyword.iskeyword(arg):
            raise ValueError(f"tool {name!r}: argument {arg!r} cannot be a Python parameter name")
    ordered = [a for a in props if a in required] + [a for a in props if a not in required]
    signature = []
    for arg in ordered:
        kind = props[arg].get("type")
        annotation = _TYPES.get(kind, "str") if isinstance(kind, str) else "str"
        signature.append(f"{arg}: {annotation}" if arg in required else f"{arg}: Optional[{annotation}] = None")
    lines = [spec.get("description") or f"The {name} tool.", ""]
    if ordered:
        lines.append("Args:")
        for arg in ordered:
            prop = props[arg]
            text = prop.get("description") or f"the {arg.replace('_', ' ')}"
            extra = []
            if "enum" in prop:
                extra.append(f"one of {', '.join(json.dumps(v) for v in prop['enum'])}")
            lines.append(f"    {arg}: {text}" + (f" ({'; '.join(extra)})" if extra else ""))
        lines.append("")
    lines += ["Returns:", "    The tool's output as JSON, or the error."]
    source = (f"def {name}(self{''.join(', ' + s for s in signature)}) -> str:\n"
              f"    return self._call({name!r}, {{{', '.join(f'{a!r}: {a}' for a in ordered)}}})\n")
    namespace: JSON = {"Optional": Optional}
    exec(compile(source, f"<envharness tool {name}>", "exec"), namespace)  # the one way to give a method a real signature
    method = namespace[name]
    method.__doc__ = "\n".join(lines)
    return method


def environment_factory(url: Optional[str] = None, token: Optional[str] = None, domain: Optional[str] = None,
                        task_type: Optional[str] = None, level: Optional[int] = None, task_id: Optional[str] = None,
                        split: Optional[str] = None, dynamics: Optional[JSON] = None, group_size: Optional[int] = None,
                        tools: Optional[List[JSON]] = None, message_tool: bool = True, name: str = "EnvHarnessEnv") -> type:
    """A class for ``GRPOTrainer(environment_factory=...)``: no-argument constructor, ``reset(**kwargs) -> str``, one
    method per domain tool and ``get_reward()``.

    The tools are read from the server once (one episode of the selection is reset and closed) unless ``tools``
    (EnvHarness tool specs) is given. ``url``/``token`` default to ``ENVHARNESS_URL``/``ENVHARNESS_TOKEN``.
    With ``group_size`` (or a ``group_size`` column), rows with a ``group_id`` column join server-side GRPO groups.
    ``message_tool`` adds ``send_message(text)`` (a message to the simulated user, answered with its reply), for
    domains whose tasks need the agent to talk to the user; pass False for tool-only domains.
    """
    url, token = server_from_env(url, token)
    defaults = {k: v for k, v in {"domain": domain, "task_type": task_type, "level": level, "task_id": task_id,
                                  "split": split, "dynamics": dynamics}.items() if v is not None}
    if tools is None:
        with Client(url, token) as client:
            env = client.make(domain=domain, task_type=task_type, level=level, task_id=task_id, split=split, seed=0)
            tools = env.pending[0].get("tools", []) if env.pending else []
            env.close()
    namespace: JSON = {"_url": url, "_token": token, "_defaults": defaults, "_group_size": group_size,
                       "__doc__": f"EnvHarness environment for TRL (tools: {', '.join(t['name'] for t in tools)})."}
    for spec in tools:
        namespace[spec["name"]] = _tool_method(spec)
    if message_tool:
        if "send_message" in namespace:
            raise ValueError("the domain has a tool named send_message; pass message_tool=False")
        namespace["send_message"] = EnvHarnessTRLEnv._send_message
    return type(name, (EnvHarnessTRLEnv,), namespace)
