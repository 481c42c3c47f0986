/**
 * OpenAI-compatible chat models (OpenAI, vLLM, Ollama...) as an EnvHarness agent and as an LLM simulated
 * user, over one reusable chat client with deterministic retries.
 */
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import OpenAI from 'openai';
import { canonicalize, EnvHarnessError, toEnvHarnessError } from '../core/index.js';
import type {
  Action,
  Agent,
  AgentContext,
  AgentEpisode,
  Domain,
  ErrorCode,
  JsonObject,
  JsonValue,
  Observation,
  Rng,
  SimulatedUser,
  Task,
  ToolSpec,
  TraceEntry,
  Usage,
  UserTurn,
} from '../core/index.js';

// ---- defaults ---------------------------------------------------------------------------------

/** Defaults of the chat client (proposed for core/defaults.ts). */
export const OPENAI_DEFAULTS = {
  /** Retries after the first attempt, on 408/409/429/5xx and connection failures. */
  maxRetries: 4,
  /** Backoff before retry n (0-based) is `min(maxDelayMs, baseDelayMs * 2^n)` unless the server says when. */
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  /** The longest `retry-after` honoured; longer waits are capped to this. */
  maxRetryAfterMs: 60_000,
  /** Per-request timeout. */
  timeoutMs: 120_000,
  /** The OpenAI API, when no base URL is given. */
  baseURL: 'https://api.openai.com/v1',
} as const;

/** Bumped whenever the agent's prompts or tool mapping change: part of its recorded config. */
export const OPENAI_AGENT_PROMPT_VERSION = 1;

// ---- chat client ------------------------------------------------------------------------------

/** A chat message in the chat-completions format. */
export type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;
/** A function tool in the chat-completions format. */
export type ChatTool = OpenAI.Chat.ChatCompletionFunctionTool;

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ChatTool[];
  temperature?: number;
  maxTokens?: number;
}

export interface ChatToolCall {
  id: string;
  name: string;
  /** The arguments as the model wrote them (JSON text, not necessarily valid). */
  arguments: string;
}

/** One completion, normalised. */
export interface ChatReply {
  content: string | null;
  toolCalls: ChatToolCall[];
  usage: Usage;
  finishReason: string | null;
  /** Attempts it took (1 = no retry). */
  attempts: number;
}

export interface ChatClientOptions {
  /** e.g. `http://localhost:8000/v1` (vLLM), `http://localhost:11434/v1` (Ollama), `https://api.openai.com/v1`. */
  baseURL: string;
  /** Sent as the bearer token. Local servers usually need none. Never read from the environment here. */
  apiKey?: string;
  maxRetries?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  maxRetryAfterMs?: number;
  timeoutMs?: number;
  /** How to wait between retries (default: a timer). Tests inject one that records the delays. */
  sleep?: (ms: number) => Promise<void>;
  /** Told about each retry before its wait (for logs). */
  onRetry?: (retry: { attempt: number; delayMs: number; reason: string }) => void;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
}

/** A chat-completions client with deterministic retries; `completeSync` blocks (for synchronous interfaces). */
export interface ChatClient {
  readonly baseURL: string;
  complete(request: ChatRequest): Promise<ChatReply>;
  /**
   * The same call, blocking this thread until it is answered (it runs in a worker thread). For the
   * synchronous `SimulatedUser` interface only: it stalls everything else on this thread meanwhile.
   */
  completeSync(request: ChatRequest): ChatReply;
  /** Stops the worker thread of `completeSync`, if one was started. */
  close(): Promise<void>;
}

/** The options of a chat client that survive a trip to a worker thread (no functions). */
type PortableOptions = Omit<ChatClientOptions, 'sleep' | 'onRetry'>;

/**
 * Creates a chat client over the official `openai` package with its own retry loop (the package's
 * retries are off): transient failures (HTTP 408, 409, 429, 5xx, connection resets and timeouts) are
 * retried up to `maxRetries` times, waiting `retry-after-ms` / `retry-after` (seconds) when the server
 * sends them, else `baseDelayMs * 2^n`. Then it throws `UPSTREAM_FAILED`.
 * @example
 * const client = createChatClient({ baseURL: 'http://localhost:11434/v1' });
 * const reply = await client.complete({ model: 'qwen3', messages: [{ role: 'user', content: 'hi' }] });
 */
export function createChatClient(options: ChatClientOptions): ChatClient {
  const baseURL = checkBaseURL(options.baseURL);
  const maxRetries = options.maxRetries ?? OPENAI_DEFAULTS.maxRetries;
  const policy = {
    baseDelayMs: options.baseDelayMs ?? OPENAI_DEFAULTS.baseDelayMs,
    maxDelayMs: options.maxDelayMs ?? OPENAI_DEFAULTS.maxDelayMs,
    maxRetryAfterMs: options.maxRetryAfterMs ?? OPENAI_DEFAULTS.maxRetryAfterMs,
  };
  const timeoutMs = options.timeoutMs ?? OPENAI_DEFAULTS.timeoutMs;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  // Everything explicit, so that the package reads no OPENAI_* variables for these.
  const openai = new OpenAI({
    baseURL,
    apiKey: options.apiKey ?? 'EMPTY',
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    maxRetries: 0,
    timeout: timeoutMs,
    logLevel: 'off',
    ...(options.headers ? { defaultHeaders: options.headers } : {}),
  });
  const portable: PortableOptions = { ...options, baseURL };
  delete (portable as ChatClientOptions).sleep;
  delete (portable as ChatClientOptions).onRetry;
  let worker: SyncWorker | undefined;

  async function complete(request: ChatRequest): Promise<ChatReply> {
    const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = { model: request.model, messages: request.messages };
    if (request.tools !== undefined && request.tools.length > 0) body.tools = request.tools;
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
    for (let attempt = 0; ; attempt++) {
      let completion: OpenAI.Chat.ChatCompletion;
      try {
        completion = await openai.chat.completions.create(body);
      } catch (error) {
        if (!isTransient(error) || attempt >= maxRetries) throw upstreamFailed(error, attempt + 1, baseURL, request.model);
        const delayMs = retryDelayMs(error, attempt, policy);
        options.onRetry?.({ attempt: attempt + 1, delayMs, reason: describeError(error) });
        await sleep(delayMs);
        continue;
      }
      return normalizeCompletion(completion, attempt + 1, baseURL, request.model);
    }
  }

  return {
    baseURL,
    complete,
    completeSync(request) {
      worker ??= startSyncWorker(portable, timeoutMs, maxRetries, policy);
      return worker.call(request);
    },
    async close() {
      await worker?.terminate();
      worker = undefined;
    },
  };
}

function checkBaseURL(baseURL: string): string {
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    throw new EnvHarnessError('CONFIG_INVALID', `base URL "${baseURL}" is not a URL; e.g. http://localhost:8000/v1`, { details: { pointer: '/baseURL' } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EnvHarnessError('CONFIG_INVALID', `base URL "${baseURL}" must be http or https`, { details: { pointer: '/baseURL' } });
  }
  return baseURL.replace(/\/+$/, '');
}

/** Whether a failed call may succeed if repeated. */
export function isTransient(error: unknown): boolean {
  if (error instanceof OpenAI.APIUserAbortError) return false;
  if (error instanceof OpenAI.APIConnectionError) return true;
  if (error instanceof OpenAI.APIError) {
    const hint = headerOf(error, 'x-should-retry');
    if (hint === 'true') return true;
    if (hint === 'false') return false;
    const status = error.status ?? 0;
    return status === 408 || status === 409 || status === 429 || status >= 500;
  }
  return false;
}

/**
 * The wait before retry `attempt` (0-based): the server's `retry-after-ms` or `retry-after` (seconds)
 * when given (capped at `maxRetryAfterMs`), else `min(maxDelayMs, baseDelayMs * 2^attempt)`.
 */
export function retryDelayMs(error: unknown, attempt: number, policy: { baseDelayMs: number; maxDelayMs: number; maxRetryAfterMs: number }): number {
  const ms = Number(headerOf(error, 'retry-after-ms'));
  if (headerOf(error, 'retry-after-ms') !== undefined && Number.isFinite(ms) && ms >= 0) return Math.min(ms, policy.maxRetryAfterMs);
  const seconds = headerOf(error, 'retry-after');
  // An HTTP-date retry-after would need the clock; it falls back to the backoff.
  if (seconds !== undefined && /^\d+(\.\d+)?$/.test(seconds.trim())) return Math.min(Number(seconds) * 1000, policy.maxRetryAfterMs);
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
}

function headerOf(error: unknown, name: string): string | undefined {
  const headers = error instanceof OpenAI.APIError ? error.headers : undefined;
  return headers?.get(name) ?? undefined;
}

function describeError(error: unknown): string {
  if (error instanceof OpenAI.APIError && error.status !== undefined) return `HTTP ${error.status}: ${error.message}`;
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return `${error instanceof Error ? error.message : String(error)}${cause}`;
}

function upstreamFailed(error: unknown, attempts: number, baseURL: string, model: string): EnvHarnessError {
  if (error instanceof EnvHarnessError) return error;
  const status = error instanceof OpenAI.APIError ? error.status : undefined;
  const transient = isTransient(error);
  const hint = status === 401 || status === 403
    ? '; check the API key (OPENAI_API_KEY for the CLI)'
    : status === 404
      ? `; check the base URL and that the server serves model "${model}"`
      : transient
        ? '; the server kept failing, try again later or raise maxRetries'
        : '';
  return new EnvHarnessError(
    'UPSTREAM_FAILED',
    `chat completion at ${baseURL} (model ${model}) failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${describeError(error)}${hint}`,
    { cause: error, details: { baseURL, model, attempts, ...(status !== undefined ? { status } : {}), transient } },
  );
}

function normalizeCompletion(completion: OpenAI.Chat.ChatCompletion, attempts: number, baseURL: string, model: string): ChatReply {
  const choice = completion.choices?.[0];
  if (choice?.message === undefined) {
    throw new EnvHarnessError('UPSTREAM_FAILED', `chat completion at ${baseURL} (model ${model}) has no choices`, { details: { baseURL, model, attempts } });
  }
  const message = choice.message;
  const toolCalls: ChatToolCall[] = [];
  for (const [i, call] of (message.tool_calls ?? []).entries()) {
    if (call.type !== 'function') continue;
    toolCalls.push({ id: call.id || `call_${i}`, name: call.function.name, arguments: call.function.arguments ?? '' });
  }
  const usage: Usage = {};
  if (completion.usage) {
    usage.inputTokens = completion.usage.prompt_tokens;
    usage.outputTokens = completion.usage.completion_tokens;
  }
  return { content: message.content ?? null, toolCalls, usage, finishReason: choice.finish_reason ?? null, attempts };
}

// ---- the synchronous path: a worker thread and Atomics.wait -------------------------------------

interface SyncWorker {
  call(request: ChatRequest): ChatReply;
  terminate(): Promise<void>;
}

/** What the worker thread is started with. */
interface WorkerSetup {
  module: string;
  tsx: string | null;
  options: PortableOptions;
  flag: SharedArrayBuffer;
  port: MessagePort;
}

type WorkerReply = { ok: true; reply: ChatReply } | { ok: false; error: { code: ErrorCode; message: string; details?: Record<string, unknown> } };

// Plain CommonJS run with `eval`: registers tsx when this module is TypeScript source, then loads it.
const WORKER_BOOTSTRAP = `
const { parentPort, workerData } = require('node:worker_threads');
const answer = (reply) => {
  workerData.port.postMessage(reply);
  const flag = new Int32Array(workerData.flag);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
};
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  const mod = await import(workerData.module);
  mod.serveChatWorker(workerData, parentPort, answer);
})().catch((error) => {
  const message = 'the chat worker thread failed to start: ' + (error && error.message ? error.message : String(error));
  parentPort.on('message', () => answer({ ok: false, error: { code: 'INTERNAL', message } }));
});
`;

function startSyncWorker(options: PortableOptions, timeoutMs: number, maxRetries: number, policy: { maxDelayMs: number; maxRetryAfterMs: number }): SyncWorker {
  const fromSource = import.meta.url.endsWith('.ts');
  const flag = new SharedArrayBuffer(4);
  const signal = new Int32Array(flag);
  const { port1, port2 } = new MessageChannel();
  const setup: WorkerSetup = {
    module: import.meta.url,
    tsx: fromSource ? import.meta.resolve('tsx/esm/api') : null,
    options,
    flag,
    port: port2,
  };
  const worker = new Worker(WORKER_BOOTSTRAP, { eval: true, workerData: setup, transferList: [port2] });
  worker.unref();
  let failure: Error | undefined;
  worker.on('error', (error) => {
    failure = error;
  });
  // Enough for every attempt to time out and every wait to be the longest allowed, plus start-up.
  const waitMs = (maxRetries + 1) * (timeoutMs + Math.max(policy.maxDelayMs, policy.maxRetryAfterMs)) + 30_000;
  return {
    call(request) {
      Atomics.store(signal, 0, 0);
      worker.postMessage(request);
      Atomics.wait(signal, 0, 0, waitMs);
      const received = receiveMessageOnPort(port1);
      if (received === undefined) {
        throw new EnvHarnessError('UPSTREAM_FAILED', `chat completion at ${options.baseURL} (model ${request.model}) got no answer within ${waitMs} ms${failure ? `: ${failure.message}` : ''}`, {
          details: { baseURL: options.baseURL, model: request.model },
        });
      }
      const reply = received.message as WorkerReply;
      if (!reply.ok) throw new EnvHarnessError(reply.error.code, reply.error.message, reply.error.details ? { details: reply.error.details } : {});
      return reply.reply;
    },
    async terminate() {
      port1.close();
      await worker.terminate();
    },
  };
}

/**
 * Worker-thread side of `completeSync` (internal: started by the client, not by callers): answers each
 * request with the async client and wakes the waiting thread.
 * @internal
 */
export function serveChatWorker(setup: WorkerSetup, port: MessagePort | null, answer: (reply: WorkerReply) => void): void {
  if (port === null) throw new EnvHarnessError('INTERNAL', 'serveChatWorker runs only in a worker thread');
  const client = createChatClient(setup.options);
  port.on('message', (request: ChatRequest) => {
    client.complete(request).then(
      (reply) => answer({ ok: true, reply }),
      (error: unknown) => {
        const e = toEnvHarnessError(error);
        answer({ ok: false, error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) } });
      },
    );
  });
}

// ---- the agent ----------------------------------------------------------------------------------

export interface OpenAIAgentOptions {
  baseURL: string;
  model: string;
  /** Bearer token; the CLI passes OPENAI_API_KEY. */
  apiKey?: string;
  /** Sampling temperature (default: the server's). */
  temperature?: number;
  /** Cap on completion tokens per call. */
  maxTokens?: number;
  maxRetries?: number;
  sleep?: (ms: number) => Promise<void>;
  timeoutMs?: number;
  /** A client to share (then baseURL, apiKey, retries and sleep above are the client's business). */
  client?: ChatClient;
  /** Agent name in runs (default `openai`). */
  name?: string;
}

const SEND_MESSAGE = 'send_message_to_user';
const FINISH = 'finish';

const SYSTEM_PREAMBLE = `You are an agent acting in a simulated environment through tools.
- Use the tools to look things up and to act. Call one tool at a time unless the calls are independent.
- To talk to the user, call ${SEND_MESSAGE} (or reply with plain text). The user's answer comes back as its result.
- Follow the policy below. Tell the user the facts they asked for before you finish.
- When the task is done, call ${FINISH}; for a question, put only the final answer in its "answer" argument.`;

/**
 * An agent backed by an OpenAI-compatible chat model. The reset observation's policy goes into the
 * system prompt and its text (the user's opening, or the task's instructions when there is no user)
 * becomes the first user message; the observation's tools become function tools, plus
 * `send_message_to_user` and `finish`. Each tool call is one action (extra parallel calls are queued and
 * answered in order); plain assistant text is a message to the user. Each completion's token usage is
 * reported with its first action, so token budgets count it.
 * @example
 * const agent = createOpenAIAgent({ baseURL: 'http://localhost:8000/v1', model: 'Qwen/Qwen3-8B' });
 * const outcome = await harness.runEpisode(task, agent, { seed: 0 });
 */
export function createOpenAIAgent(options: OpenAIAgentOptions): Agent {
  if (typeof options.model !== 'string' || options.model.trim() === '') {
    throw new EnvHarnessError('CONFIG_INVALID', 'the openai agent needs a model name (e.g. --model gpt-4o-mini)', { details: { pointer: '/model' } });
  }
  const client = options.client ?? createChatClient({
    baseURL: options.baseURL,
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    ...(options.sleep !== undefined ? { sleep: options.sleep } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
  const config: JsonObject = {
    baseURL: client.baseURL,
    model: options.model,
    temperature: options.temperature ?? null,
    maxTokens: options.maxTokens ?? null,
    maxRetries: options.maxRetries ?? OPENAI_DEFAULTS.maxRetries,
    promptVersion: OPENAI_AGENT_PROMPT_VERSION,
  };
  return {
    name: options.name ?? 'openai',
    version: '1',
    config: () => config,
    begin: (_ctx: AgentContext) => new OpenAIEpisode(client, options),
  };
}

/** What the model is waiting to hear about: the result of a tool call, or the user's reply to plain text. */
type Awaiting = { kind: 'tool'; id: string; builtin: 'message' | 'finish' | undefined } | { kind: 'text' };

class OpenAIEpisode implements AgentEpisode {
  private messages: ChatMessage[] = [];
  private tools: ChatTool[] = [];
  private domainTools = new Set<string>();
  private queue: Array<{ call: ChatToolCall; action: Action }> = [];
  private awaiting: Awaiting | undefined;

  constructor(
    private readonly client: ChatClient,
    private readonly options: OpenAIAgentOptions,
  ) {}

  async act(observation: Observation): Promise<Action> {
    this.absorb(observation);
    if (this.queue.length > 0) return this.dequeue();
    const request: ChatRequest = { model: this.options.model, messages: this.messages, tools: this.tools };
    if (this.options.temperature !== undefined) request.temperature = this.options.temperature;
    if (this.options.maxTokens !== undefined) request.maxTokens = this.options.maxTokens;
    const reply = await this.client.complete(request);
    this.messages.push(assistantMessage(reply));
    if (reply.toolCalls.length > 0) {
      this.queue = reply.toolCalls.map((call) => ({ call, action: this.toAction(call) }));
      return withUsage(this.dequeue(), reply.usage);
    }
    this.awaiting = { kind: 'text' };
    return withUsage({ type: 'message', text: reply.content ?? '' }, reply.usage);
  }

  /** Appends what the model needs to hear about the observation. */
  private absorb(observation: Observation): void {
    if (observation.kind === 'reset') {
      this.start(observation);
      return;
    }
    const awaiting = this.awaiting;
    this.awaiting = undefined;
    if (awaiting === undefined) return;
    if (awaiting.kind === 'tool') {
      this.messages.push({ role: 'tool', tool_call_id: awaiting.id, content: toolResultText(observation, awaiting.builtin) });
    } else {
      this.messages.push({ role: 'user', content: observation.error ? toolResultText(observation, 'message') : (observation.text ?? '(no reply)') });
    }
  }

  private start(observation: Observation): void {
    const specs = observation.tools ?? [];
    this.domainTools = new Set(specs.map((t) => t.name));
    this.tools = specs.map(functionTool);
    if (!this.domainTools.has(SEND_MESSAGE)) {
      this.tools.push({
        type: 'function',
        function: {
          name: SEND_MESSAGE,
          description: 'Send a message to the user. The result is the user\'s reply.',
          parameters: { type: 'object', properties: { message: { type: 'string', description: 'what to say' } }, required: ['message'], additionalProperties: false },
        },
      });
    }
    if (!this.domainTools.has(FINISH)) {
      this.tools.push({
        type: 'function',
        function: {
          name: FINISH,
          description: 'End the episode when the task is done. For a question, give only the final answer.',
          parameters: { type: 'object', properties: { answer: { type: 'string', description: 'the final answer, for questions' } }, additionalProperties: false },
        },
      });
    }
    let system = SYSTEM_PREAMBLE;
    if (observation.policy !== undefined) system += `\n\n# Policy\n${observation.policy}`;
    this.messages = [
      { role: 'system', content: system },
      { role: 'user', content: observation.text ?? '' },
    ];
    this.queue = [];
    this.awaiting = undefined;
  }

  private dequeue(): Action {
    const next = this.queue.shift()!;
    const builtin = this.domainTools.has(next.call.name) ? undefined : next.call.name === SEND_MESSAGE ? 'message' : next.call.name === FINISH ? 'finish' : undefined;
    this.awaiting = { kind: 'tool', id: next.call.id, builtin };
    return next.action;
  }

  /** A model's tool call as an action; malformed arguments go to the runtime as they are (it rejects them with a pointer). */
  private toAction(call: ChatToolCall): Action {
    const parsed = parseArguments(call.arguments);
    if (!this.domainTools.has(call.name)) {
      if (call.name === SEND_MESSAGE) return { type: 'message', text: textArg(parsed, 'message') as string };
      if (call.name === FINISH) {
        const answer = isPlainObject(parsed) ? parsed.answer : undefined;
        return answer === undefined || answer === null ? { type: 'finish' } : ({ type: 'finish', answer: scalarText(answer) } as Action);
      }
    }
    return { type: 'tool', tool: call.name, args: parsed as JsonObject };
  }
}

function functionTool(spec: ToolSpec): ChatTool {
  return { type: 'function', function: { name: spec.name, description: spec.description, parameters: spec.parameters as Record<string, unknown> } };
}

function assistantMessage(reply: ChatReply): ChatMessage {
  if (reply.toolCalls.length === 0) return { role: 'assistant', content: reply.content ?? '' };
  return {
    role: 'assistant',
    content: reply.content,
    tool_calls: reply.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })),
  };
}

function withUsage(action: Action, usage: Usage): Action {
  return usage.inputTokens === undefined && usage.outputTokens === undefined ? action : { ...action, usage };
}

/** The text a model reads as a tool call's result. Pointers are made relative to the call's arguments. */
function toolResultText(observation: Observation, builtin: 'message' | 'finish' | undefined): string {
  if (observation.error !== undefined) {
    const { code, message, pointer, retryAfterMs } = observation.error;
    const error: Record<string, unknown> = { code, message };
    if (pointer !== undefined) error.pointer = builtin === undefined && pointer.startsWith('/args') ? pointer.slice('/args'.length) : pointer;
    if (retryAfterMs !== undefined) error.retryAfterMs = retryAfterMs;
    return JSON.stringify({ error });
  }
  if (builtin === 'message') return observation.text === undefined ? 'Delivered. (There is no user to reply in this task.)' : `The user replied: ${observation.text}`;
  if (observation.output !== undefined) return typeof observation.output === 'string' ? observation.output : JSON.stringify(observation.output);
  return observation.text ?? 'OK';
}

function parseArguments(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function textArg(parsed: unknown, key: string): unknown {
  if (typeof parsed === 'string') return parsed;
  return isPlainObject(parsed) ? scalarText(parsed[key]) : parsed;
}

/** Models often write answers as numbers; the action wants text. */
function scalarText(value: unknown): unknown {
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The agent from CLI flags and environment: `--base-url` (else OPENAI_BASE_URL, else the OpenAI API),
 * `--model` (required), the key from OPENAI_API_KEY (required for the OpenAI API itself).
 * @example
 * const agent = openaiAgentFromOptions({ baseUrl: 'http://localhost:11434/v1', model: 'llama3.1' }, process.env);
 */
export function openaiAgentFromOptions(flags: { baseUrl?: string; model?: string; temperature?: number; maxRetries?: number }, env: Record<string, string | undefined>): Agent {
  const baseURL = flags.baseUrl ?? env.OPENAI_BASE_URL ?? OPENAI_DEFAULTS.baseURL;
  const model = flags.model ?? '';
  if (model.trim() === '') {
    throw new EnvHarnessError('CONFIG_INVALID', '--agent openai needs --model NAME (the model the server serves)', { details: { pointer: '/model' } });
  }
  const apiKey = env.OPENAI_API_KEY;
  if ((apiKey === undefined || apiKey === '') && isOpenAIHost(baseURL)) {
    throw new EnvHarnessError('CONFIG_INVALID', `${baseURL} needs an API key: set OPENAI_API_KEY`, { details: { pointer: '/apiKey' } });
  }
  return createOpenAIAgent({
    baseURL,
    model,
    ...(apiKey ? { apiKey } : {}),
    ...(flags.temperature !== undefined ? { temperature: flags.temperature } : {}),
    ...(flags.maxRetries !== undefined ? { maxRetries: flags.maxRetries } : {}),
  });
}

function isOpenAIHost(baseURL: string): boolean {
  try {
    return new URL(baseURL).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

// ---- the LLM simulated user ---------------------------------------------------------------------

/** The format tag of an LLM user's recording. */
export const LLM_USER_RECORDING_FORMAT = 'envharness.llm-user/1';

/** One call of the LLM user: the full prompt and what the model answered. */
export interface LlmUserExchange {
  prompt: ChatMessage[];
  completion: string;
  usage: Usage;
}

/** What `record()` returns (and `createRecordedUser` replays). */
export interface LlmUserRecording {
  format: typeof LLM_USER_RECORDING_FORMAT;
  model: string;
  exchanges: LlmUserExchange[];
}

export interface LlmUserOptions {
  client: ChatClient;
  model: string;
  /** The task whose hidden goal (`task.spec.user`, else its instructions) the user pursues. */
  task?: Task;
  /** The goal text itself (instead of `task`), e.g. a tau-bench instruction verbatim. */
  goal?: string;
  temperature?: number;
  maxTokens?: number;
  /** Replaces the default system prompt; receives the goal text (e.g. tau-bench's user prompt). */
  systemPrompt?: (goal: string) => string;
}

/** The marker the model writes when its goal is met (as in tau-bench). */
export const USER_STOP = '###STOP###';
const AGENT_GREETING = 'Hi! How can I help you today?';
const CONFIRMATION = /^\W*(yes|yeah|yep|sure|confirm(ed)?|i confirm|go ahead|please (do|proceed|go ahead)|ok(ay)?[,.!]? (go ahead|do it|proceed|please)|correct|that'?s (right|correct))\b/i;

/** The goal text of a task's simulated user: a string, or an object's `instruction` plus the facts it knows. */
export function userGoal(task: Task): string {
  const user = task.spec.user;
  if (typeof user === 'string') return user;
  if (isPlainObject(user)) {
    const key = ['instruction', 'instructions', 'goal', 'request'].find((k) => typeof user[k] === 'string');
    if (key === undefined) return `${task.spec.instructions}\n\nWhat you know:\n${JSON.stringify(user, null, 2)}`;
    const rest = Object.fromEntries(Object.entries(user).filter(([k]) => k !== key));
    const facts = Object.keys(rest).length > 0 ? `\n\nWhat you know (say it only when asked):\n${JSON.stringify(rest, null, 2)}` : '';
    return `${user[key] as string}${facts}`;
  }
  return task.spec.instructions;
}

function defaultUserPrompt(goal: string): string {
  return `You are a customer talking to a customer-service agent. Play the customer.

Your goal and what you know:
${goal}

Rules:
- Write only your next message to the agent, short, in the customer's voice.
- Do not give all your information at once; give details when the agent asks for them.
- Never make up facts that are not in your goal. If you do not know something, say so.
- When the agent asks you to confirm an action that serves your goal, answer "Yes, I confirm."
- When your goal is met, or cannot be met, reply with exactly ${USER_STOP}`;
}

/** The model's text as a user turn: the stop marker ends the conversation, a leading "yes" confirms. */
function toTurn(completion: string): UserTurn {
  const done = completion.includes(USER_STOP);
  const text = completion.replace(USER_STOP, '').trim();
  const turn: UserTurn = { text: text === '' ? (done ? 'Thanks, that is all.' : '...') : text };
  if (done) turn.done = true;
  if (CONFIRMATION.test(text)) turn.confirms = true;
  return turn;
}

/** The user's side of the conversation: the model plays the user, so the agent's turns are `user` messages. */
function userConversation(options: LlmUserOptions) {
  if (options.goal === undefined && options.task === undefined) {
    throw new EnvHarnessError('CONFIG_INVALID', 'an LLM user needs the task (or its goal text)', { details: { pointer: '/task' } });
  }
  const system = (options.systemPrompt ?? defaultUserPrompt)(options.goal ?? userGoal(options.task!));
  const history: ChatMessage[] = [{ role: 'system', content: system }, { role: 'user', content: AGENT_GREETING }];
  const exchanges: LlmUserExchange[] = [];
  return {
    request(): ChatRequest {
      const request: ChatRequest = { model: options.model, messages: history.slice() };
      if (options.temperature !== undefined) request.temperature = options.temperature;
      if (options.maxTokens !== undefined) request.maxTokens = options.maxTokens;
      return request;
    },
    accept(request: ChatRequest, reply: ChatReply): UserTurn {
      const completion = reply.content ?? '';
      exchanges.push({ prompt: request.messages, completion, usage: reply.usage });
      history.push({ role: 'assistant', content: completion });
      return toTurn(completion);
    },
    agentSaid(text: string): void {
      history.push({ role: 'user', content: text });
    },
    record: () => recordingJson(options.model, exchanges),
  };
}

/**
 * A simulated user played by a chat model: it pursues the task's hidden goal, and records every prompt
 * and completion (`record()`; the runtime stores it in the last step's `info.user`). Its calls block (the
 * `SimulatedUser` interface is synchronous): use it in training and evaluation loops, not inside a
 * server; runners that can await the user take `createAsyncLlmUser`.
 * @example
 * const domain = withSimulatedUser(retail, (task) => createLlmUser({ client, model: 'gpt-4o-mini', task }));
 */
export function createLlmUser(options: LlmUserOptions): SimulatedUser & { record(): JsonValue } {
  const conversation = userConversation(options);
  const ask = (): UserTurn => {
    const request = conversation.request();
    return conversation.accept(request, options.client.completeSync(request));
  };
  return {
    opening: () => ask().text,
    respond(agentText) {
      conversation.agentSaid(agentText);
      return ask();
    },
    record: conversation.record,
  };
}

/** A simulated user whose turns are awaited (for runners that prepare the user's reply before the step). */
export interface AsyncSimulatedUser {
  opening(): Promise<string>;
  respond(agentText: string, ctx: { trace: readonly TraceEntry[] }): Promise<UserTurn>;
  record(): JsonValue;
}

/** `createLlmUser` without blocking: the same prompts, turns and recording, over `client.complete`. */
export function createAsyncLlmUser(options: LlmUserOptions): AsyncSimulatedUser {
  const conversation = userConversation(options);
  // One call at a time, in order, even if a caller does not wait.
  let last: Promise<unknown> = Promise.resolve();
  const ask = (before?: () => void): Promise<UserTurn> => {
    const run = last.then(async () => {
      before?.();
      const request = conversation.request();
      return conversation.accept(request, await options.client.complete(request));
    });
    last = run.catch(() => undefined);
    return run;
  };
  return {
    opening: async () => (await ask()).text,
    respond: (agentText) => ask(() => conversation.agentSaid(agentText)),
    record: conversation.record,
  };
}

function recordingJson(model: string, exchanges: readonly LlmUserExchange[]): JsonValue {
  const recording: LlmUserRecording = { format: LLM_USER_RECORDING_FORMAT, model, exchanges: exchanges.slice() };
  return JSON.parse(JSON.stringify(recording)) as JsonValue;
}

/**
 * A user that replays an LLM user's recording without calling any model. The agent must say what it said
 * when the recording was made: a different prompt throws (the runtime ends the episode as a simulator error).
 * @example
 * const replayed = withSimulatedUser(retail, () => createRecordedUser(transitions.at(-1)!.info.user));
 */
export function createRecordedUser(recording: unknown): SimulatedUser & { record(): JsonValue } {
  const parsed = parseRecording(recording);
  let history: ChatMessage[] | undefined;
  let next = 0;
  const replay = (): UserTurn => {
    const exchange = parsed.exchanges[next];
    if (exchange === undefined) {
      throw new EnvHarnessError('PARAMS_INVALID', `the recorded user has ${parsed.exchanges.length} exchanges and was asked for one more: this is not the recorded conversation`);
    }
    if (canonicalize(history) !== canonicalize(exchange.prompt)) {
      throw new EnvHarnessError('PARAMS_INVALID', `the recorded user diverged at exchange ${next}: the conversation differs from the recording`, { details: { exchange: next } });
    }
    next++;
    history!.push({ role: 'assistant', content: exchange.completion });
    return toTurn(exchange.completion);
  };
  return {
    opening() {
      history = (parsed.exchanges[0]?.prompt ?? []).slice(0, 2);
      return replay().text;
    },
    respond(agentText) {
      history!.push({ role: 'user', content: agentText });
      return replay();
    },
    record: () => recordingJson(parsed.model, parsed.exchanges.slice(0, next)),
  };
}

function parseRecording(value: unknown): LlmUserRecording {
  const r = value as Partial<LlmUserRecording> | null;
  if (r === null || typeof r !== 'object' || r.format !== LLM_USER_RECORDING_FORMAT || !Array.isArray(r.exchanges) || typeof r.model !== 'string') {
    throw new EnvHarnessError('PARAMS_INVALID', `not an LLM user recording (expected format ${LLM_USER_RECORDING_FORMAT}); pass the last step's info.user`, { details: { pointer: '/format' } });
  }
  return r as LlmUserRecording;
}

/**
 * The domain with another simulated user (e.g. an LLM user, or a recorded one for replay). The copy has
 * its own runtime cache; register it in place of the original.
 */
export function withSimulatedUser<S>(domain: Domain<S>, createUser: (task: Task, rng: Rng) => SimulatedUser): Domain<S> {
  return { ...domain, createUser };
}
