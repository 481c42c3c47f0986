/**
 * A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests (hosted models are
 * unreachable here). It speaks POST /v1/chat/completions with JSON, `tool_calls` and `usage`, and can
 * answer with HTTP errors (429/500 with retry-after) or drop the connection.
 *
 * In-process: `startFakeOpenAI(script)`. In a child process, for callers that block the event loop
 * (the LLM user's synchronous calls): `startFakeOpenAIProcess(replies)`.
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** One scripted answer. */
export type FakeReply =
  | { content: string; toolCalls?: undefined; usage?: FakeUsage }
  | { toolCalls: Array<{ name: string; arguments: unknown; id?: string }>; content?: string; usage?: FakeUsage }
  | { status: number; message?: string; retryAfter?: string; retryAfterMs?: number }
  | { drop: true };

/** A request as the server received it. */
export interface FakeRequest {
  path: string;
  headers: Record<string, string>;
  body: any;
}

/** Replies in order, or a function of the request (and its 0-based index). */
export type FakeScript = FakeReply[] | ((request: FakeRequest, index: number) => FakeReply);

export interface FakeOpenAI {
  /** `http://127.0.0.1:<port>/v1`: what the openai client takes as `baseURL`. */
  baseURL: string;
  /** Every request received, in order. */
  requests: FakeRequest[];
  close(): Promise<void>;
}

/** Deterministic token counts: about four characters per token. */
function tokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value ?? '').length / 4));
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function completion(request: FakeRequest, reply: Extract<FakeReply, { content: string } | { toolCalls: unknown[] }>, index: number): unknown {
  const message: Record<string, unknown> = { role: 'assistant', content: reply.content ?? null };
  if (reply.toolCalls !== undefined) {
    message.tool_calls = reply.toolCalls.map((call, i) => ({
      id: call.id ?? `call_${index}_${i}`,
      type: 'function',
      function: { name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}) },
    }));
  }
  const usage = reply.usage ?? { prompt_tokens: tokens(request.body?.messages), completion_tokens: tokens(message) };
  return {
    id: `chatcmpl-fake-${index}`,
    object: 'chat.completion',
    created: 0,
    model: request.body?.model ?? 'fake',
    choices: [{ index: 0, message, logprobs: null, finish_reason: reply.toolCalls !== undefined ? 'tool_calls' : 'stop' }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts the fake server in this process. */
export async function startFakeOpenAI(script: FakeScript, onRequest?: (request: FakeRequest) => void): Promise<FakeOpenAI> {
  const requests: FakeRequest[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      const path = (req.url ?? '/').split('?')[0]!;
      if (req.method !== 'POST' || path !== '/v1/chat/completions') {
        send(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error', code: null, param: null } });
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        send(res, 400, { error: { message: 'body is not JSON', type: 'invalid_request_error', code: null, param: null } });
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const request: FakeRequest = { path, headers, body };
      const index = requests.length;
      requests.push(request);
      onRequest?.(request);
      const reply = typeof script === 'function' ? script(request, index) : script[index];
      if (reply === undefined) {
        send(res, 400, { error: { message: `the fake server's script has no reply #${index}`, type: 'invalid_request_error', code: null, param: null } });
      } else if ('drop' in reply) {
        req.socket.destroy();
      } else if ('status' in reply) {
        const headers: Record<string, string> = {};
        if (reply.retryAfter !== undefined) headers['retry-after'] = reply.retryAfter;
        if (reply.retryAfterMs !== undefined) headers['retry-after-ms'] = String(reply.retryAfterMs);
        send(res, reply.status, { error: { message: reply.message ?? `scripted ${reply.status}`, type: 'server_error', code: null, param: null } }, headers);
      } else {
        send(res, 200, completion(request, reply, index));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Starts the fake server in a child process (`node --import tsx`), so that it answers while this
 * process's event loop is blocked. Requests are reported back over the child's stdout.
 */
export async function startFakeOpenAIProcess(replies: FakeReply[]): Promise<FakeOpenAI> {
  const file = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    env: { ...process.env, FAKE_OPENAI_SCRIPT: JSON.stringify(replies) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const requests: FakeRequest[] = [];
  let closed = false;
  child.once('close', () => (closed = true));
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`fake OpenAI process exited early (${code})`)));
    lines.on('line', (line) => {
      const message = JSON.parse(line) as { port?: number; request?: FakeRequest };
      if (message.port !== undefined) resolve(message.port);
      if (message.request !== undefined) requests.push(message.request);
    });
  });
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    // Resolves on 'close' (stdout drained), not 'exit': every request line the child wrote has been read,
    // so `requests` is complete once close() resolves (its lines race the HTTP replies otherwise).
    close: () =>
      new Promise<void>((resolve) => {
        if (closed) return resolve();
        child.once('close', () => resolve());
        if (child.exitCode === null) child.kill('SIGTERM');
      }),
  };
}

/** Child-process entry: serves the replies in FAKE_OPENAI_SCRIPT and reports each request as a JSON line. */
async function main(): Promise<void> {
  const replies = JSON.parse(process.env.FAKE_OPENAI_SCRIPT ?? '[]') as FakeReply[];
  const fake = await startFakeOpenAI(replies, (request) => process.stdout.write(`${JSON.stringify({ request })}\n`));
  process.stdout.write(`${JSON.stringify({ port: Number(new URL(fake.baseURL).port) })}\n`);
  process.once('SIGTERM', () => void fake.close().then(() => process.exit(0)));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
