"""Text <-> EnvHarness actions for text-in/text-out trainers: Hermes-style ``<tool_call>`` blocks, tool results, tool schemas."""

from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, List, Optional, Tuple

JSON = Dict[str, Any]

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_MESSAGE = re.compile(r"<message>\s*(.*?)\s*</message>", re.S)


def parse_actions(text: str) -> List[JSON]:
    """The actions in a model's output, in order.

    ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (the Hermes format Qwen and most tool-calling
    chat templates emit; verl's ``hermes`` parser) is a tool call, ``<message>...</message>`` a message to the
    simulated user; an output with neither is ``finish`` with the text as the answer. A tool-call block that is
    not valid JSON is passed on as it is, so the environment answers with INVALID_ACTION (an agent mistake).
    """
    actions: List[Tuple[int, JSON]] = []
    for match in _TOOL_CALL.finditer(text):
        try:
            call = json.loads(match.group(1))
        except ValueError:
            actions.append((match.start(), {"type": "tool", "tool": "", "args": {"_unparsed": match.group(1)[:2000]}}))
            continue
        if isinstance(call, dict):
            args = call.get("arguments", call.get("parameters", {}))
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    pass
            actions.append((match.start(), {"type": "tool", "tool": call.get("name"), "args": args}))
        else:
            actions.append((match.start(), {"type": "tool", "tool": "", "args": {"_unparsed": call}}))
    for match in _MESSAGE.finditer(text):
        actions.append((match.start(), {"type": "message", "text": match.group(1)}))
    if not actions:
        answer = text.strip()
        return [{"type": "finish", "answer": answer} if answer else {"type": "finish"}]
    return [a for _, a in sorted(actions, key=lambda x: x[0])]


def render_observation(observation: JSON) -> str:
    """What the model reads back: the tool's output (JSON), the error, or the user's reply."""
    error = observation.get("error")
    if error:
        return json.dumps({"error": {"code": error.get("code"), "message": error.get("message")}}, ensure_ascii=False)
    if "output" in observation:
        return json.dumps(observation["output"], ensure_ascii=False)
    return str(observation.get("text", ""))


def tool_schemas(tools: List[JSON]) -> List[JSON]:
    """EnvHarness tool specs as OpenAI function tools (``apply_chat_template(tools=...)``)."""
    return [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                              "parameters": t.get("parameters", {"type": "object", "properties": {}})}}
            for t in tools]


def server_from_env(url: Optional[str], token: Optional[str]) -> Tuple[str, str]:
    """``url``/``token``, else ``ENVHARNESS_URL``/``ENVHARNESS_TOKEN`` (how a trainer's worker processes find the server)."""
    url = url or os.environ.get("ENVHARNESS_URL")
    token = token or os.environ.get("ENVHARNESS_TOKEN")
    if not url or not token:
        raise ValueError("the EnvHarness server is not configured: pass url and token, or set ENVHARNESS_URL and ENVHARNESS_TOKEN")
    return url, token


def task_selection(source: Dict[str, Any]) -> JSON:
    """The task keys a dataset row may carry: task_id, domain, task_type, level, split, seed, group_id, group_size."""
    keys = ("task_id", "domain", "task_type", "level", "split", "seed", "group_id", "group_size", "skip_zero_variance")
    return {k: source[k] for k in keys if source.get(k) is not None}
