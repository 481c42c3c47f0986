/** Trajectories as OpenAI-style chat messages with tool calls, the format fine-tuning code reads. */
import type { Observation, StoredTask, Task, ToolSpec, Transition } from '../core/index.js';

export interface TrajectoryToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type TrajectoryMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: TrajectoryToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface TrajectoryTool {
  type: 'function';
  function: { name: string; description: string; parameters: ToolSpec['parameters'] };
}

/**
 * One episode as chat messages: the policy as a system message, the opening as a user message, each
 * tool call as an assistant `tool_calls` message answered by a `tool` message, messages to the simulated
 * user and its replies as assistant/user turns, and `finish` as the final assistant message.
 * @example
 * const { messages, tools } = toChatTrajectory(task, resetObservation, await store.listTransitions(episodeId));
 */
export function toChatTrajectory(task: Task | StoredTask, reset: Observation | undefined, transitions: readonly Transition[]): { messages: TrajectoryMessage[]; tools: TrajectoryTool[] } {
  const messages: TrajectoryMessage[] = [];
  if (reset?.policy) messages.push({ role: 'system', content: reset.policy });
  messages.push({ role: 'user', content: reset?.text ?? task.spec.instructions });
  for (const t of transitions) {
    const a = t.action;
    const o = t.observation;
    if (a.type === 'tool') {
      const id = `call_${t.step}`;
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: a.tool, arguments: JSON.stringify(a.args) } }] });
      messages.push({ role: 'tool', tool_call_id: id, content: JSON.stringify(o.error ? { error: o.error } : (o.output ?? null)) });
    } else if (a.type === 'message') {
      messages.push({ role: 'assistant', content: a.text });
      if (o.error) messages.push({ role: 'user', content: `[environment] ${o.error.code}: ${o.error.message}` });
      else if (o.text !== undefined) messages.push({ role: 'user', content: o.text });
    } else if (a.type === 'finish') {
      messages.push({ role: 'assistant', content: a.answer ?? '' });
    } else {
      // Input that was not a valid action: kept verbatim, with the environment's error as the reply.
      messages.push({ role: 'assistant', content: typeof a.input === 'string' ? a.input : JSON.stringify(a.input) });
      if (o.error) messages.push({ role: 'user', content: `[environment] ${o.error.code}: ${o.error.message}` });
    }
  }
  const tools = (reset?.tools ?? []).map((s): TrajectoryTool => ({ type: 'function', function: { name: s.name, description: s.description, parameters: s.parameters } }));
  return { messages, tools };
}
