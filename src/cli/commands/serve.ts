/** CLI: envharness serve (HTTP API v1). */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import {
  BUILTIN_AGENT_NAMES,
  createAgent,
  createHarness,
  EnvHarnessError,
  type Domain,
} from '../../index.js';
import { builtinDomains } from '../../builtins.js';
// The server, MCP and SQLite are subpath exports, not part of the root entry.
import { createServer, SERVER_DEFAULTS } from '../../server/index.js';
import { createMcpHttpHandler, mcpRoutes, type McpHttpHandler } from '../../mcp/index.js';
import { collect, parseIntOption, type CliContext } from '../options.js';
import { loadTemplateFiles } from '../open.js';
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
  mcpTaskType?: string;
  mcpLevel?: number;
  mcpSeed?: number;
  /** false with --no-openenv. */
  openenv: boolean;
  openenvMaxSessions?: number;
  openenvSessionTimeout?: number;
}

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
    .option('--mcp-task-type <type>', 'task type of the MCP episode (default: any task of the dynamic pool)')
    .option('--mcp-level <n>', 'level of the MCP episode', parseIntOption('--mcp-level', 1))
    .option('--mcp-seed <n>', 'seed of the MCP episode (default 0)', parseIntOption('--mcp-seed', 0))
    .option('--no-openenv', 'do not serve the OpenEnv protocol at /openenv (docs/trainers.md)')
    .option('--openenv-max-sessions <n>', 'OpenEnv max_concurrent_envs: open /openenv/ws sessions (default 4096)', parseIntOption('--openenv-max-sessions', 1))
    .option('--openenv-session-timeout <seconds>', 'OpenEnv session_timeout: close a /openenv/ws session idle this long', parseIntOption('--openenv-session-timeout', 1))
    .action(async (opts: ServeOptions) => {
      const globals = ctx.globals();
      // Env vars are read here, once; an empty ENVHARNESS_TOKEN counts as absent.
      const token = opts.token ?? (process.env.ENVHARNESS_TOKEN || undefined);
      const domains = [...builtinDomains(), ...(await loadDomainModules(opts.domainModule))];
      const harness = await createHarness({ store: globals.store, domains, templates: loadTemplateFiles(globals.templates) });
      let server: ReturnType<typeof createServer>;
      // MCP over Streamable HTTP at /v1/mcp (server token only): one shared episode session, started on
      // the first MCP request (so a fresh store with an empty pool still serves the rest of the API).
      let mcp: McpHttpHandler | undefined;
      try {
        await harness.initialize();
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
        });
      } catch (error) {
        await mcp?.close();
        await harness.close();
        throw error;
      }
      let address: { url: string };
      try {
        address = await server.listen();
      } catch (error) {
        await server.close();
        await mcp?.close();
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
