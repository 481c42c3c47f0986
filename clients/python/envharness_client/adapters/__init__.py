"""Adapters shaped to trainers' environment interfaces: TRL ``environment_factory``, verl ``AgentLoopBase``/``BaseTool``, SkyRL ``BaseTextEnv``.

Each module imports its trainer lazily (or not at all), so the package stays dependency-free; see docs/trainers.md.
"""

from .toolcalls import parse_actions, render_observation, tool_schemas

__all__ = ["parse_actions", "render_observation", "tool_schemas"]
