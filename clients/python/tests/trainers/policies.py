"""Scripted stand-ins for a model on the ``inventory/restock`` test tasks (the server's test domains)."""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional, Tuple

RESTOCK = re.compile(r"add (\d+) units of (\S+?) and")


def restock_goal(text: str) -> Tuple[str, int]:
    amount, item = RESTOCK.search(text).groups()  # type: ignore[union-attr]
    return item, int(amount)


class RestockModel:
    """Emits the Hermes-format turns of a correct restock: get_stock, add_stock, a message, then a final answer."""

    def __init__(self, text: str, wrong: bool = False) -> None:
        self.item, self.amount = restock_goal(text)
        self.wrong = wrong
        self.turn = 0
        self.quantity: Optional[int] = None

    def next(self, last_tool_output: Optional[str]) -> str:
        self.turn += 1
        if self.turn == 1:
            return f'<tool_call>{{"name": "get_stock", "arguments": {{"item": "{self.item}"}}}}</tool_call>'
        if self.turn == 2:
            self.quantity = json.loads(last_tool_output or "{}").get("quantity", 0)
            amount = self.amount + (1 if self.wrong else 0)
            return f'<tool_call>{{"name": "add_stock", "arguments": {{"item": "{self.item}", "quantity": {amount}}}}}</tool_call>'
        if self.turn == 3:
            return f"<message>Done: {self.item} now has {(self.quantity or 0) + self.amount} units.</message>"
        return "All done."


class CharTokenizer:
    """A stand-in for a Hugging Face tokenizer (one token per character) with a chat template that injects a
    default system prompt, so verl's system-prompt stripping is exercised as with Qwen's template."""

    SYSTEM = "You are a helpful assistant."

    def render(self, messages: List[Dict[str, Any]], tools: Any = None, add_generation_prompt: bool = False) -> str:
        out = ""
        if not messages or messages[0].get("role") != "system":
            out += f"<|system|>{self.SYSTEM}\n"
        if tools:
            out += f"<|tools|>{json.dumps(tools)}\n"
        for m in messages:
            out += f"<|{m.get('role')}|>{m.get('content')}\n"
        if add_generation_prompt:
            out += "<|assistant|>"
        return out

    def apply_chat_template(self, messages: List[Dict[str, Any]], tools: Any = None, add_generation_prompt: bool = False,
                            tokenize: bool = True, **kwargs: Any) -> Any:
        text = self.render(messages, tools, add_generation_prompt)
        return [ord(c) for c in text] if tokenize else text

    def encode(self, text: str) -> List[int]:
        return [ord(c) for c in text]

    def decode(self, ids: List[int], skip_special_tokens: bool = False) -> str:
        return "".join(chr(i) for i in ids)


class TokenOutput:
    def __init__(self, token_ids: List[int]) -> None:
        self.token_ids = token_ids
        self.log_probs = [-0.5] * len(token_ids)


class ScriptedServerManager:
    """A stand-in for verl's ``AsyncLLMServerManager``: ``generate(request_id, prompt_ids=..., sampling_params=...)``
    decodes the prompt, finds the task and the last tool result, and answers with the scripted model's next turn."""

    def __init__(self, tokenizer: CharTokenizer) -> None:
        self.tokenizer = tokenizer
        self.models: Dict[str, RestockModel] = {}
        self.calls: List[Tuple[str, int]] = []

    async def generate(self, request_id: str, *, prompt_ids: List[int], sampling_params: Dict[str, Any], **kwargs: Any) -> TokenOutput:
        text = self.tokenizer.decode(prompt_ids)
        self.calls.append((request_id, len(prompt_ids)))
        model = self.models.get(request_id)
        if model is None:
            model = self.models[request_id] = RestockModel(text)
        tool_outputs = re.findall(r"<\|tool\|>(.*?)\n", text)
        answer = model.next(tool_outputs[-1] if tool_outputs else None)
        return TokenOutput(self.tokenizer.encode(answer))
