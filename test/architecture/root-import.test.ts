/**
 * `import 'envharness'` loads no native module, no HTTP framework, no LLM SDK and no MCP SDK. A fresh Node
 * process (with tsx and the `envharness-source` condition, under which the package's exports point at its
 * .ts sources) imports the entry by its package name with a module-resolution hook that records every
 * module resolved, and prints the list. test/e2e/package.test.ts checks the same of the packed package.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './source.js';

const FORBIDDEN = ['better-sqlite3', 'hono', '@hono/node-server', '@hono/zod-openapi', 'openai', '@modelcontextprotocol/sdk'];

const dir = mkdtempSync(path.join(tmpdir(), 'envharness-root-import-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every package and file URL resolved while a fresh process imports `specifier` (CommonJS requires included). */
function loadedBy(specifier: string): string[] {
  const trace = path.join(dir, `${specifier.replace(/\W+/g, '_')}.log`);
  const hooks = path.join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    [
      "import { appendFileSync } from 'node:fs';",
      'export async function resolve(specifier, context, next) {',
      '  const result = await next(specifier, context);',
      "  appendFileSync(process.env.ENVHARNESS_TRACE, result.url + '\\n');",
      '  return result;',
      '}',
    ].join('\n'),
  );
  const register = path.join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(new URL(`file://${hooks}`).href)});\n`);
  const script = `await import(${JSON.stringify(specifier)}); const { createRequire } = await import('node:module'); for (const f of Object.keys(createRequire(import.meta.url).cache)) console.log('file://' + f);`;
  // The `envharness-source` condition maps each export to its TypeScript source (the package's own tests); published, they map to dist/.
  const out = execFileSync(process.execPath, ['--conditions=envharness-source', '--import', 'tsx/esm', '--import', register, '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, ENVHARNESS_TRACE: trace },
    encoding: 'utf8',
  });
  return [...readFileSync(trace, 'utf8').split('\n'), ...out.split('\n')].filter(Boolean);
}

/** The npm packages among `urls` (by their node_modules folder). */
function packagesOf(urls: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const url of urls) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (m) names.add(m[1]!);
  }
  return names;
}

describe("the root entry point ('envharness')", () => {
  it('loads core, generation, runtime, curriculum, the harness and the agents, and no driver, HTTP framework or SDK', () => {
    const urls = loadedBy('envharness');
    const src = new URL('src/', `file://${ROOT.endsWith('/') ? ROOT : `${ROOT}/`}`).href;
    const ours = urls.filter((u) => u.startsWith(src)).map((u) => `src/${u.slice(src.length)}`);
    expect(ours).toEqual(expect.arrayContaining(['src/index.ts', 'src/core/index.ts', 'src/runtime/index.ts', 'src/harness/harness.ts', 'src/agents/index.ts']));
    expect(ours.filter((f) => f.startsWith('src/storage/') || f.startsWith('src/server/') || f.startsWith('src/mcp/') || f.startsWith('src/cli/') || f === 'src/agents/openai.ts' || f === 'src/builtins.ts')).toEqual([]);
    const packages = packagesOf(urls);
    expect(packages.has('zod')).toBe(true);
    expect(FORBIDDEN.filter((p) => packages.has(p))).toEqual([]);
  });

  it('sees what a subpath loads: envharness/sqlite loads the SQLite driver, envharness/server loads hono', () => {
    expect(packagesOf(loadedBy('envharness/sqlite')).has('better-sqlite3')).toBe(true);
    expect(packagesOf(loadedBy('envharness/server')).has('hono')).toBe(true);
  });
});
