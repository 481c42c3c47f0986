/** Resolves `--agent NAME` to an agent: the built-ins, or an OpenAI-compatible endpoint. */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from '../harness/atomic-file.js';
import { dirname } from 'node:path';
import { EnvHarnessError, type Agent, type JsonValue } from '../core/index.js';
import { createAgent } from '../agents/index.js';
import { builtinDomains } from '../builtins.js';

export interface AgentFlags {
  agent: string;
  seed?: number;
  agentState?: string;
  baseUrl?: string;
  model?: string;
}

/**
 * The built-in agent, with a learner's saved state loaded from `agentState` when the file exists, or
 * `state` when given (a resumed run's checkpoint; null: start fresh).
 */
export async function resolveAgent(flags: AgentFlags, env: NodeJS.ProcessEnv, state?: JsonValue): Promise<Agent> {
  if (flags.agent === 'openai') {
    // Loaded on demand: the openai client is only needed for this agent.
    const mod = await import('../agents/openai.js');
    return mod.openaiAgentFromOptions({ baseUrl: flags.baseUrl, model: flags.model }, env);
  }
  // `rule-based` plays each domain's own baseline (`Domain.baselines`).
  const options: Record<string, unknown> = { seed: flags.seed ?? 0, domains: builtinDomains() };
  if (state !== undefined) {
    if (state !== null) options.state = state;
  } else if (flags.agent === 'learner' && flags.agentState && existsSync(flags.agentState)) {
    try {
      options.state = JSON.parse(readFileSync(flags.agentState, 'utf8')) as JsonValue;
    } catch (error) {
      throw new EnvHarnessError('IMPORT_INVALID', `cannot read agent state ${flags.agentState}: ${(error as Error).message}; delete it to start fresh`, { cause: error });
    }
  }
  return createAgent(flags.agent, options);
}

/** Saves a learning agent's state (no-op for agents without state). */
export function saveAgentState(agent: Agent, path: string | undefined): string | undefined {
  if (!path || !agent.getState) return undefined;
  mkdirSync(dirname(path), { recursive: true });
  // Atomic: a crash mid-write must not leave a torn state file that the next run cannot read.
  writeFileAtomic(path, `${JSON.stringify(agent.getState())}\n`);
  return path;
}
