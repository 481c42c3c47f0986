/** Tool schemas for agents: JSON Schema from each tool's zod arguments, built once per tool. */
import { z } from 'zod';
import type { Tool } from './domain.js';
import type { ToolSpec } from './episode.js';
import type { JsonObject } from './json.js';

/** The agent-facing spec of a tool: name, description, effect and JSON Schema (draft 2020-12) of its arguments. */
export function toolSpec(tool: Tool<any, any>): ToolSpec {
  const schema = z.toJSONSchema(tool.args, { io: 'input', unrepresentable: 'any' }) as JsonObject;
  const { $schema: _dialect, ...parameters } = schema;
  return deepFreeze({ name: tool.name, description: tool.description, effect: tool.effect, parameters });
}

/** Freezes a JSON value in place so that shared observation parts cannot be changed by a caller. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
