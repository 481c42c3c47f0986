/** CLI: envharness serve (HTTP API v1). */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { BUILTIN_AGENT_NAMES, createAgent, EnvHarnessError, type Domain } from '../../index.js';
import { DEFAULT_FILL_PER_LEVEL } from '../../harness/harness.js';
import { RefillQueue, startQueuedRefill } from '../../harness/refill-queue.js';
// The server, MCP and SQLite are subpath exports, not part of the root entry.
import { createServer, SERVER_DEFAULTS, type Durability } from '../../server/index.js';
import { createMcpHttpHandler, mcpRoutes, type McpHttpHandler } from '../../mcp/index.js';
import { collect, parseIntOption, type CliContext } from '../options.js';
import { openHarness } from '../open.js';
import { describeFill, ensurePool } from '../fill.js';
import { colors } from '../output.js';

interface ServeOptions {
  host: string;
  port: number;
  token?: string;
  idle: number;
  bodyLimit: number;
  domainModule: string[];
  allowHost: string[];
  /** false with --no-mcp. */
  mcp: boolean;
  /** false with --no-fill. */
  fill: boolean;
  fillPerLevel: number;
  mcpTaskType?: string;
  mcpLevel?: number;
  mcpSeed?: number;
  /** false with --no-openenv. */
  openenv: boolean;
  openenvMaxSessions?: number;
  openenvSessionTimeout?: number;
  /** false with --no-ors. */
  ors: boolean;
  orsPrefix?: string;
  /** Unset: DEFAULT_REFILL_LOW_WATER on a postgres:// store, off on SQLite. */
  refillLowWater?: number;
  refillBatchSize?: number;
  durability: string;
}

/** `--refill-low-water` on a postgres:// store when it is not given: a (slice, level) below this many tasks gets a refill job. */
export const DEFAULT_REFILL_LOW_WATER = 20;

export function registerServeCommands(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('serve the HTTP API v1 (OpenAPI document at /v1/openapi.json); binds 127.0.0.1 unless told otherwise')
    .option('--host <address>', 'bind address; a non-loopback address needs --token', SERVER_DEFAULTS.host)
    .option('--port <n>', 'port (0: any free port; the chosen one is printed)', parseIntOption('--port', 0), SERVER_DEFAULTS.port)
    .option('--token <token>', 'server token (env ENVHARNESS_TOKEN); generated and printed when absent')
    .option('--idle <seconds>', 'close episodes idle this long', parseIntOption('--idle', 1), SERVER_DEFAULTS.idleMs / 1000)
    .option('--body-limit <bytes>', 'largest request body', parseIntOption('--body-limit', 1024), SERVER_DEFAULTS.bodyLimit)
    .option('--domain-module <file>', 'an ES module exporting `domains` (Domain[]) to serve besides the built-in ones; repeatable', collect, [])
    .option('--allow-host <name>', 'a further Host/Origin name to accept (e.g. behind a reverse proxy); repeatable', collect, [])
    .option('--no-mcp', 'do not serve MCP (Streamable HTTP) at /v1/mcp')
    .option('--no-fill', "do not fill the built-in domains' empty pools at start-up (the first draw still fills them)")
    .option('--fill-per-level <n>', 'tasks per template and level when filling a pool at start-up', parseIntOption('--fill-per-level', 1), DEFAULT_FILL_PER_LEVEL)
    .option('--mcp-task-type <type>', 'task type of the MCP episode (default: any task of the dynamic pool)')
    .option('--mcp-level <n>', 'level of the MCP episode', parseIntOption('--mcp-level', 1))
    .option('--mcp-seed <n>', 'seed of the MCP episode (default 0)', parseIntOption('--mcp-seed', 0))
    .option('--durability <mode>', 'committed (a step is answered once durable: in the SQLite store\'s step journal, or committed where there is none) or relaxed (answered once applied, committed within 10 ms: shorter answers, but a process crash may lose the last acknowledged steps; docs/http.md)', 'committed')
    .option('--no-openenv', 'do not serve the OpenEnv protocol at /openenv (docs/trainers.md)')
    .option('--openenv-max-sessions <n>', 'OpenEnv max_concurrent_envs: open /openenv/ws sessions (default 4096)', parseIntOption('--openenv-max-sessions', 1))
    .option('--no-ors', 'do not serve the Open Reward Standard HTTP API at /ors (docs/trainers.md)')
    .option('--ors-prefix <path>', 'path prefix of the Open Reward Standard API (default /ors)')
    .option('--openenv-session-timeout <seconds>', 'OpenEnv session_timeout: close a /openenv/ws session idle this long', parseIntOption('--openenv-session-timeout', 1))
    .option('--refill-low-water <n>', `postgres:// stores: queue a refill job for \`envharness worker\` when a draw leaves a (slice, level) of the dynamic pool below n tasks (default ${DEFAULT_REFILL_LOW_WATER}; 0: never)`, parseIntOption('--refill-low-water', 0))
    .option('--refill-batch-size <n>', 'postgres:// stores: candidates per refill job (default 64)', parseIntOption('--refill-batch-size', 1))
    .action(async (opts: ServeOptions) => {
      const globals = ctx.globals();
      // Refill jobs live on a PostgreSQL queue: refused on any other store before anything is opened.
      const postgres = /^postgres(ql)?:\/\//.test(globals.store);
      if (!postgres && (opts.refillLowWater !== undefined || opts.refillBatchSize !== undefined)) {
        const flag = opts.refillLowWater !== undefined ? '--refill-low-water' : '--refill-batch-size';
        throw new EnvHarnessError('CONFIG_INVALID', `${flag} needs a postgres:// store (refill jobs live on a PostgreSQL queue); drop it, or serve with --store postgres://…`, { details: { pointer: `/${flag.slice(2)}` } });
      }
      const lowWater = postgres ? (opts.refillLowWater ?? DEFAULT_REFILL_LOW_WATER) : 0;
      // Env vars are read here, once; an empty ENVHARNESS_TOKEN counts as absent.
      const token = opts.token ?? (process.env.ENVHARNESS_TOKEN || undefined);
      // Opened like every other command's harness (imported tau-bench worlds included).
      const harness = await openHarness(globals, { domains: await loadDomainModules(opts.domainModule) });
      const domains = [...harness.domains.values()];
      let server: ReturnType<typeof createServer>;
      // MCP over Streamable HTTP at /v1/mcp (server token only): one shared episode session, started on
      // the first MCP request.
      let mcp: McpHttpHandler | undefined;
      let refill: { queue: RefillQueue; stop(): Promise<void> } | undefined;
      const stopRefill = async () => {
        await refill?.stop();
        await refill?.queue.close();
      };
      try {
        // A fresh store gets the built-in domains' pools before the first client asks for an episode
        // (the first draw would fill them too, but then inside a client's request).
        if (opts.fill) {
          const filled = describeFill(await ensurePool(harness, ctx.io, harness.defaultDomains(), opts.fillPerLevel, 0, !globals.json));
          if (filled !== undefined && !globals.json) ctx.io.err(filled);
        }
        // After the start-up fill, so that filling does not queue refills of slices it is about to fill.
        if (lowWater > 0) {
          const queue = await RefillQueue.open({
            url: globals.store,
            ...(opts.refillBatchSize !== undefined ? { batchSize: opts.refillBatchSize } : {}),
            onError: (error) => ctx.io.err(`envharness serve: refill queue: ${error.message}`),
          });
          const started = startQueuedRefill(harness, queue, {
            lowWater,
            onError: (error) => ctx.io.err(`envharness serve: refill: ${(error as Error).message}`),
            // One line per worker batch this replica adds to its pool (stderr: stdout stays the start-up line).
            onBatch: (batch, added) => {
              if (added > 0) ctx.io.err(JSON.stringify({ refill: { batch, added } }));
            },
          });
          refill = { queue, stop: () => started.stop() };
        }
        if (opts.mcp) {
          mcp = createMcpHttpHandler({
            harness,
            defaults: {
              ...(opts.mcpTaskType !== undefined ? { taskType: opts.mcpTaskType } : {}),
              ...(opts.mcpLevel !== undefined ? { level: opts.mcpLevel } : {}),
              ...(opts.mcpSeed !== undefined ? { seed: opts.mcpSeed } : {}),
            },
          });
        }
        server = createServer({
          harness,
          host: opts.host,
          port: opts.port,
          idleMs: opts.idle * 1000,
          bodyLimit: opts.bodyLimit,
          allowedHosts: opts.allowHost,
          durability: opts.durability as Durability,
          // Server-side agents for evaluation runs (POST /v1/runs { evaluate: { agent } }).
          agents: Object.fromEntries(BUILTIN_AGENT_NAMES.map((name) => [name, () => createAgent(name, { domains })])),
          ...(token !== undefined ? { token } : {}),
          ...(mcp !== undefined ? { extraRoutes: mcpRoutes(mcp) } : {}),
          openenv: opts.openenv
            ? {
                ...(opts.openenvMaxSessions !== undefined ? { maxConcurrentEnvs: opts.openenvMaxSessions } : {}),
                ...(opts.openenvSessionTimeout !== undefined ? { sessionTimeoutS: opts.openenvSessionTimeout } : {}),
              }
            : false,
          ors: opts.ors ? (opts.orsPrefix !== undefined ? { prefix: opts.orsPrefix } : {}) : false,
        });
      } catch (error) {
        await mcp?.close();
        await stopRefill();
        await harness.close();
        throw error;
      }
      let address: { url: string };
      try {
        address = await server.listen();
      } catch (error) {
        await server.close();
        await mcp?.close();
        await stopRefill();
        await harness.close();
        const e = error as NodeJS.ErrnoException;
        throw new EnvHarnessError('CONFIG_INVALID', `cannot listen on ${opts.host}:${opts.port}: ${e.code ?? e.message}`, { cause: error, details: { pointer: '/port' } });
      }
      if (globals.json) {
        ctx.io.out(JSON.stringify({ url: address.url, store: harness.store.location, ...(mcp !== undefined ? { mcp: `${address.url}/v1/mcp` } : {}), ...(server.tokenGenerated ? { token: server.token } : {}) }));
      } else {
        ctx.io.out(`EnvHarness API v1 listening on ${address.url} (store ${harness.store.location}, domains ${domains.map((d) => d.name).join(', ')})`);
        if (server.tokenGenerated) ctx.io.out(`token ${colors.bold(server.token)}  (send Authorization: Bearer <token>; set ENVHARNESS_TOKEN or --token to choose it)`);
        ctx.io.out(`OpenAPI: ${address.url}/v1/openapi.json${mcp !== undefined ? `  ·  MCP (Streamable HTTP): ${address.url}/v1/mcp` : ''}${opts.openenv ? `  ·  OpenEnv: ${address.url}/openenv/key/<token>` : ''}  ·  Ctrl-C stops`);
      }
      await new Promise<void>((done) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          done();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await server.close();
      await mcp?.close();
      await stopRefill();
      await harness.close();
      if (!globals.json) ctx.io.err('envharness serve: stopped; open episodes were recorded as closed');
    });
}

/** Imports modules that export `domains` (an array) or `domain`; their domains are served next to the built-in ones. */
async function loadDomainModules(files: readonly string[]): Promise<Domain<any>[]> {
  const out: Domain<any>[] = [];
  for (const file of files) {
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(resolve(file)).href)) as Record<string, unknown>;
    } catch (error) {
      throw new EnvHarnessError('CONFIG_INVALID', `--domain-module ${file}: cannot import it: ${(error as Error).message}`, { cause: error });
    }
    const found = Array.isArray(mod['domains']) ? (mod['domains'] as unknown[]) : mod['domain'] !== undefined ? [mod['domain']] : [];
    if (found.length === 0 || !found.every(isDomain)) {
      throw new EnvHarnessError('CONFIG_INVALID', `--domain-module ${file}: export \`domains\` (an array of domains from defineDomain) or \`domain\``);
    }
    out.push(...(found as Domain<any>[]));
  }
  return out;
}

function isDomain(value: unknown): boolean {
  const d = value as Partial<Domain<unknown>> | null;
  return d !== null && typeof d === 'object' && typeof d.name === 'string' && Array.isArray(d.tools) && Array.isArray(d.templates);
}
