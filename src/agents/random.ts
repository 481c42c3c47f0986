/** The `random` agent: valid-looking random tool calls, messages and finishes; the floor every task must beat. */
import { createRng, sampleFromSchema, type Action, type Agent, type AgentContext, type AgentEpisode, type JsonObject, type Observation, type ToolSpec } from '../core/index.js';
import { SeenWords } from './words.js';

export interface RandomAgentOptions {
  /** Mixed with each episode's seed (default 0). */
  seed?: number;
  /** Chance of finishing at each step (default 0.1). */
  finishProbability?: number;
  /** Chance of sending a message instead of calling a tool (default 0.2). */
  messageProbability?: number;
}

const PHRASES = [
  'Could you tell me more about that?',
  'Can you confirm your email address?',
  'Let me check that for you.',
  'Do you confirm that I should go ahead?',
  'Is there anything else I can help you with?',
  'Thanks, one moment please.',
];

/**
 * An agent that picks a random allowed tool with arguments sampled from its JSON Schema (filled with
 * words it has seen), sometimes a message, and finishes with some probability. Seeded per episode.
 * @example
 * const agent = createRandomAgent({ seed: 1 });
 */
export function createRandomAgent(options: RandomAgentOptions = {}): Agent {
  const seed = options.seed ?? 0;
  const finishProbability = options.finishProbability ?? 0.1;
  const messageProbability = options.messageProbability ?? 0.2;
  return {
    name: 'random',
    version: '1',
    config: () => ({ seed, finishProbability, messageProbability }),
    begin(ctx: AgentContext): AgentEpisode {
      const rng = createRng(['agent:random', seed, ctx.seed]);
      const words = new SeenWords();
      let tools: readonly ToolSpec[] = [];
      return {
        act(observation: Observation): Action {
          if (observation.tools !== undefined) tools = observation.tools;
          words.addObservation(observation);
          if (rng.chance(finishProbability)) return { type: 'finish' };
          if (tools.length === 0 || rng.chance(messageProbability)) {
            const seen = words.list();
            const tail = seen.length > 0 && rng.chance(0.5) ? ` ${rng.sample(seen, 2).join(' ')}` : '';
            return { type: 'message', text: `${rng.pick(PHRASES)}${tail}` };
          }
          const tool = rng.pick(tools);
          return { type: 'tool', tool: tool.name, args: sampleFromSchema({ type: 'object', ...tool.parameters }, rng, words.list()) as JsonObject };
        },
      };
    },
  };
}
