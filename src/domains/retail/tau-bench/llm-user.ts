/** `--user llm` for imported tasks: tau-bench's user-simulation prompt on an OpenAI-compatible endpoint (createLlmUser). */
import { createChatClient, createLlmUser, OPENAI_DEFAULTS, type ChatClient } from '../../../agents/openai.js';
import { EnvHarnessError } from '../../../core/index.js';
import type { TauBenchUserFactory } from './episode.js';

/** What tau-bench's user simulator says to end the conversation. */
export const TAU_BENCH_STOP = '###STOP###';

/** tau-bench's `LLMUserSimulationEnv.build_system_prompt`, verbatim. */
export function tauBenchUserSystemPrompt(instruction: string): string {
  return `You are a user interacting with an agent.

Instruction: ${instruction}
Rules:
- Just generate one line at a time to simulate the user's message.
- Do not give away all the instruction at once. Only provide the information that is necessary for the current step.
- Do not hallucinate information that is not provided in the instruction. For example, if the agent asks for the order id but it is not mentioned in the instruction, do not make up an order id, just say you do not remember or have it.
- If the instruction goal is satisified, generate '${TAU_BENCH_STOP}' as a standalone message without anything else to end the conversation.
- Do not repeat the exact instruction in the conversation. Instead, use your own words to convey the same information.
- Try to make the conversation as natural as possible, and stick to the personality in the instruction.`;
}

export interface TauBenchLlmUserOptions {
  /** OpenAI-compatible endpoint, e.g. `http://localhost:8000/v1` (default: OPENAI_BASE_URL, else the OpenAI API). */
  baseUrl?: string;
  /** The model the endpoint serves (required). */
  model?: string;
  temperature?: number;
  /** Where OPENAI_BASE_URL and OPENAI_API_KEY are read from (the CLI passes process.env). */
  env?: Record<string, string | undefined>;
  /** A chat client to use instead of making one (tests, shared clients). */
  client?: ChatClient;
}

/** The user factory, and `close` to stop the client's worker thread when done. */
export interface TauBenchLlmUser {
  user: TauBenchUserFactory;
  model: string;
  close(): Promise<void>;
}

/**
 * tau-bench's LLM user for imported tasks: `createLlmUser` (src/agents/openai.ts) with tau-bench's own
 * system prompt built from the task's `instruction`, greeted with tau-bench's "Hi! How can I help you
 * today?", ending the conversation on `###STOP###`. Every prompt and completion is recorded in the last
 * step's `info.user`; `createRecordedUser` replays it without a model.
 * @example
 * const llm = createTauBenchLlmUser({ baseUrl: 'http://localhost:8000/v1', model: 'qwen3' });
 * const runner = createTauBenchRunner(imported.domain, { user: llm.user });
 */
export function createTauBenchLlmUser(options: TauBenchLlmUserOptions): TauBenchLlmUser {
  const env = options.env ?? {};
  const model = options.model ?? '';
  if (model.trim() === '') throw new EnvHarnessError('CONFIG_INVALID', '--user llm needs --model NAME (the model the endpoint serves)', { details: { pointer: '/model' } });
  const baseURL = options.baseUrl ?? env.OPENAI_BASE_URL ?? OPENAI_DEFAULTS.baseURL;
  const apiKey = env.OPENAI_API_KEY;
  const client = options.client ?? createChatClient({ baseURL, ...(apiKey ? { apiKey } : {}) });
  const user: TauBenchUserFactory = (task, { goal }) =>
    createLlmUser({
      client,
      model,
      task,
      systemPrompt: () => tauBenchUserSystemPrompt(goal.instruction),
      ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    });
  return { user, model, close: () => (options.client === undefined ? client.close() : Promise.resolve()) };
}
