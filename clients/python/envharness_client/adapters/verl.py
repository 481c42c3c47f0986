"""verl adapters: an agent loop (``AgentLoopBase``) and a tool (``BaseTool``) backed by EnvHarness episodes.

Shaped to volcengine/verl 0.8.0.dev (commit b178a3c): ``verl/experimental/agent_loop/agent_loop.py``
(``AgentLoopBase.__init__(trainer_config, server_manager, tokenizer, processor, dataset_cls, dataset_config)``,
``async run(sampling_params, **kwargs) -> AgentLoopOutput`` with ``prompt_ids``, ``response_ids``, ``response_mask``
(1 for model tokens, 0 for tool/user tokens), ``reward_score``, ``num_turns``, ``metrics``; ``server_manager.generate(
request_id, prompt_ids=..., sampling_params=...)`` returns ``TokenOutput.token_ids``) and ``verl/tools/base_tool.py``
(``create``/``execute``/``calc_reward``/``release``, ``ToolResponse``). When verl is importable the classes subclass
verl's and the loop registers as ``envharness``; otherwise same-shaped stand-ins keep the package dependency-free.

Config (the trainer's YAML): ``actor_rollout_ref.rollout.agent.agent_loop_config_path`` lists
``{name: envharness, _target_: envharness_client.adapters.verl.EnvHarnessAgentLoop}``; dataset rows carry
``agent_name: envharness`` and ``extra_info: {task_id | domain/level, seed, group_id, group_size}``; the server is
``ENVHARNESS_URL``/``ENVHARNESS_TOKEN`` (set them in the Ray runtime env).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..aio import AsyncClient, AsyncEnv
from ..client import finish
from ..errors import EnvHarnessError
from .groups import join_series_async
from .toolcalls import parse_actions, render_observation, server_from_env, task_selection, tool_schemas

JSON = Dict[str, Any]

try:  # pragma: no cover - verl is not installable on the CI machine
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput, register
    from verl.tools.base_tool import BaseTool
    from verl.tools.schemas import ToolResponse
    HAVE_VERL = True
except ImportError:
    HAVE_VERL = False

    @dataclass
    class AgentLoopMetrics:  # type: ignore[no-redef]
        """verl's ``AgentLoopMetrics`` (seconds spent generating and in tool calls)."""
        generate_sequences: float = 0.0
        tool_calls: float = 0.0
        num_preempted: int = -1

    @dataclass
    class AgentLoopOutput:  # type: ignore[no-redef]
        """verl's ``AgentLoopOutput`` fields."""
        prompt_ids: List[int]
        response_ids: List[int]
        response_mask: List[int]
        response_logprobs: Optional[List[float]] = None
        routed_experts: Any = None
        multi_modal_data: Optional[JSON] = None
        reward_score: Optional[float] = None
        num_turns: int = 0
        metrics: Any = None
        extra_fields: JSON = field(default_factory=dict)

    @dataclass
    class ToolResponse:  # type: ignore[no-redef]
        """verl's ``ToolResponse``."""
        text: Optional[str] = None
        image: Optional[List[Any]] = None
        video: Optional[List[Any]] = None

    class AgentLoopBase:  # type: ignore[no-redef]
        """verl's ``AgentLoopBase`` constructor and ``apply_chat_template`` (tokenizer path), as in agent_loop.py."""

        def __init__(self, trainer_config: Any, server_manager: Any, tokenizer: Any, processor: Any = None,
                     dataset_cls: Any = None, dataset_config: Any = None, **kwargs: Any) -> None:
            self.config = getattr(trainer_config, "config", trainer_config)
            self.server_manager = server_manager
            self.tokenizer = tokenizer
            self.processor = processor
            self.dataset_cls = dataset_cls
            self.dataset_config = getattr(dataset_config, "config", dataset_config) or {}
            self.apply_chat_template_kwargs = dict(self.dataset_config.get("apply_chat_template_kwargs", {}) or {})
            token1 = tokenizer.apply_chat_template([{"role": "user", "content": ""}], add_generation_prompt=False, tokenize=True)
            token2 = tokenizer.apply_chat_template([{"role": "user", "content": ""}] * 2, add_generation_prompt=False, tokenize=True)
            self.system_prompt = token1[: -(len(token2) - len(token1))]

        async def apply_chat_template(self, messages: List[JSON], tools: Optional[List[JSON]] = None, images: Any = None,
                                      videos: Any = None, remove_system_prompt: bool = False) -> List[int]:
            ids = self.tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=True,
                                                     **self.apply_chat_template_kwargs)
            return ids[len(self.system_prompt):] if remove_system_prompt else ids

    def register(agent_name: str):  # type: ignore[no-redef]
        """verl's ``register`` decorator (a no-op without verl)."""
        def decorator(cls: type) -> type:
            return cls
        return decorator

    class BaseTool:  # type: ignore[no-redef]
        """verl's ``BaseTool`` constructor: ``(config, tool_schema)``; ``name`` from the schema."""

        def __init__(self, config: JSON, tool_schema: Any) -> None:
            self.config = config
            self.tool_schema = tool_schema
            function = tool_schema["function"] if isinstance(tool_schema, dict) else tool_schema.function
            self.name = function["name"] if isinstance(function, dict) else function.name

        def get_openai_tool_schema(self) -> Any:
            return self.tool_schema


_clients: Dict[Tuple[int, str, str], AsyncClient] = {}


def _client(url: Optional[str] = None, token: Optional[str] = None) -> AsyncClient:
    """One pooled client per event loop and server (verl runs many agent loops on one loop per worker)."""
    url, token = server_from_env(url, token)
    key = (id(asyncio.get_running_loop()), url, token)
    client = _clients.get(key)
    if client is None:
        client = _clients[key] = AsyncClient(url, token, max_connections=64)
    return client


async def aclose_clients() -> None:
    """Closes the pooled clients of the running event loop (call it before the loop ends, e.g. in tests)."""
    loop = id(asyncio.get_running_loop())
    for key in [k for k in _clients if k[0] == loop]:
        await _clients.pop(key).aclose()


async def _open(client: AsyncClient, pick: JSON) -> AsyncEnv:
    """An episode for a dataset row's selection (a group member when it names a group)."""
    pinned = pick.get("task_id") is not None
    sample = {} if pinned else {"domain": pick.get("domain"), "task_type": pick.get("task_type"), "level": pick.get("level")}
    if pick.get("group_id") is not None:
        if pick.get("group_size") is None:
            raise ValueError("extra_info.group_id needs extra_info.group_size")
        body = {k: v for k, v in {"size": int(pick["group_size"]), "taskId": pick.get("task_id"), "seed": pick.get("seed"),
                                  "skipZeroVariance": pick.get("skip_zero_variance"), "domain": sample.get("domain"),
                                  "taskType": sample.get("task_type"), "level": sample.get("level")}.items() if v is not None}
        created, _ = await join_series_async(client, str(pick["group_id"]), body)
        env = AsyncEnv._from_created(client, created)
        env.group = created["group"]
        return env
    import random
    seed = int(pick["seed"]) if pick.get("seed") is not None else random.SystemRandom().randrange(0, 2**31 - 1)
    return await client.make(task_id=pick.get("task_id"), seed=seed, split=None if pinned else pick.get("split"), **sample)


@register("envharness")
class EnvHarnessAgentLoop(AgentLoopBase):
    """A multi-turn tool-calling loop on one EnvHarness episode per sample.

    The prompt is the episode's policy (system) and instructions (user) with the domain's tools; the model's
    turns are parsed for ``<tool_call>`` / ``<message>`` blocks (``parse_actions``); each result is appended as
    a ``tool`` (or ``user``) message whose tokens get mask 0. A turn with no call finishes the episode.
    ``reward_score`` is the episode's summed reward (outcome plus shaping); per-step rewards and the feedback
    codes are in ``extra_fields["envharness"]``.
    """

    max_turns: int = 32

    async def run(self, sampling_params: Dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        extra = kwargs.get("extra_info") or {}
        pick = task_selection(extra if isinstance(extra, dict) else {})
        client = _client()
        env = await _open(client, pick)
        try:
            observation, info = env.pending  # type: ignore[misc]
            messages: List[JSON] = []
            if observation.get("policy"):
                messages.append({"role": "system", "content": observation["policy"]})
            messages.append({"role": "user", "content": observation.get("text", "")})
            schemas = tool_schemas(observation.get("tools", []))
            prompt_ids = await self.apply_chat_template(messages, tools=schemas)
            response_ids: List[int] = []
            response_mask: List[int] = []
            logprobs: List[float] = []
            limit = _response_length(self.config)
            request_id = uuid.uuid4().hex
            turns = 0
            done = False
            feedback: List[str] = []
            while not done and turns < self.max_turns and len(response_mask) < limit:
                output = await self.server_manager.generate(request_id, prompt_ids=prompt_ids + response_ids, sampling_params=sampling_params)
                tokens = list(output.token_ids)
                response_ids += tokens
                response_mask += [1] * len(tokens)
                if getattr(output, "log_probs", None):
                    logprobs += list(output.log_probs)
                turns += 1
                text = self.tokenizer.decode(tokens, skip_special_tokens=True)
                replies: List[JSON] = []
                for action in parse_actions(text):
                    obs, _, terminated, truncated, step_info = await env.step(action)
                    feedback += [f["code"] for f in step_info.get("feedback", [])]
                    if action["type"] == "tool":
                        replies.append({"role": "tool", "content": render_observation(obs)})
                    elif action["type"] == "message":
                        replies.append({"role": "user", "content": render_observation(obs)})
                    if terminated or truncated:
                        done = True
                        break
                if done or not replies or len(response_mask) >= limit:
                    break
                ids = await self.apply_chat_template(replies, remove_system_prompt=True)
                response_ids += ids
                response_mask += [0] * len(ids)
                if logprobs:
                    logprobs += [0.0] * len(ids)
                turns += 1
            if not done:
                await env.step(finish())  # out of turns or tokens: the episode is judged as it stands
            output_fields = {"envharness": {"episode_id": env.id, "task_id": env.task["id"], "rewards": env.rewards,
                                            "outcome": (env.result() or {}).get("success", 0.0), "feedback": feedback,
                                            **({"group": env.group["id"]} if env.group else {})}}
            return AgentLoopOutput(
                prompt_ids=prompt_ids,
                response_ids=response_ids[:limit],
                response_mask=response_mask[:limit],
                response_logprobs=logprobs[:limit] if logprobs else None,
                reward_score=float(sum(env.rewards)),
                num_turns=turns + 1,
                metrics=AgentLoopMetrics(),
                extra_fields=output_fields,
            )
        finally:
            try:
                await env.close()
            except EnvHarnessError:
                pass


def _response_length(config: Any) -> int:
    try:
        return int(config.actor_rollout_ref.rollout.response_length)
    except (AttributeError, TypeError, ValueError):
        try:
            return int(config["actor_rollout_ref"]["rollout"]["response_length"])
        except (KeyError, TypeError, ValueError):
            return 4096


class EnvHarnessTool(BaseTool):
    """One domain tool as a verl ``BaseTool``: ``create`` opens an episode for a trajectory, ``execute`` steps it with
    this tool, ``calc_reward`` finishes it and returns its summed reward, ``release`` closes it.

    ``create(instance_id, create_kwargs={task_id | domain/level, seed, group_id, group_size})`` (verl passes
    ``tools_kwargs[name]["create_kwargs"]``). Instances that share an ``episode`` key in ``create_kwargs`` share one
    episode, so several tools of one domain can act on the same world. The tool config (``config``) may hold
    ``url``/``token``; otherwise ``ENVHARNESS_URL``/``ENVHARNESS_TOKEN``.
    """

    _episodes: Dict[str, AsyncEnv] = {}
    _owners: Dict[str, int] = {}

    def __init__(self, config: JSON, tool_schema: Any) -> None:
        super().__init__(config, tool_schema)
        self._instances: Dict[str, str] = {}

    async def create(self, instance_id: Optional[str] = None, **kwargs: Any) -> Tuple[str, ToolResponse]:
        instance_id = instance_id or uuid.uuid4().hex
        create_kwargs = kwargs.get("create_kwargs", kwargs) or {}
        key = str(create_kwargs.get("episode") or instance_id)
        env = EnvHarnessTool._episodes.get(key)
        text = ""
        if env is None:
            client = _client((self.config or {}).get("url"), (self.config or {}).get("token"))
            env = await _open(client, task_selection(create_kwargs))
            EnvHarnessTool._episodes[key] = env
            text = (env.pending[0].get("text", "") if env.pending else "")
        EnvHarnessTool._owners[key] = EnvHarnessTool._owners.get(key, 0) + 1
        self._instances[instance_id] = key
        return instance_id, ToolResponse(text=text or None)

    async def execute(self, instance_id: str, parameters: Dict[str, Any], **kwargs: Any) -> Tuple[ToolResponse, float, JSON]:
        env = EnvHarnessTool._episodes[self._instances[instance_id]]
        if env.result() is not None:
            return ToolResponse(text="error: the episode has ended"), 0.0, {"ended": True}
        obs, reward, terminated, truncated, info = await env.step({"type": "tool", "tool": self.name, "args": parameters})
        metrics = {"step": info["step"], "feedback": [f["code"] for f in info.get("feedback", [])],
                   "outcome": info.get("outcome", 0.0), "shaping": info.get("shaping", 0.0), "done": terminated or truncated}
        return ToolResponse(text=render_observation(obs)), float(reward), metrics

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        env = EnvHarnessTool._episodes[self._instances[instance_id]]
        if env.result() is None:
            await env.step(finish())
        return float(sum(env.rewards))

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        key = self._instances.pop(instance_id, None)
        if key is None:
            return
        EnvHarnessTool._owners[key] -= 1
        if EnvHarnessTool._owners[key] > 0:
            return
        del EnvHarnessTool._owners[key]
        env = EnvHarnessTool._episodes.pop(key)
        try:
            await env.close()
        except EnvHarnessError:
            pass
