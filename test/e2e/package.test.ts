/**
 * The published package: `npm pack` of this checkout, installed offline into a scratch project (npm ci from
 * the npm cache), imported by its package name in fresh Node processes. Its exports resolve to compiled
 * JS with types, the root loads no native module, the CLI runs from dist/ with the build's template
 * digests and shipped regression sets, and a tampered shipped set is refused.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_CODES } from '../../src/cli/exit-codes.js';
import { ROOT } from '../architecture/source.js';

const dir = mkdtempSync(path.join(tmpdir(), 'envharness-package-'));
const scratch = path.join(dir, 'scratch');
const installed = path.join(scratch, 'node_modules', 'envharness');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function newest(folder: string): number {
  let latest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const p = path.join(folder, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return latest;
}

/** Runs `node -e script` (an ES module) in the scratch project; returns stdout. */
function nodeIn(script: string, args: string[] = []): string {
  return execFileSync(process.execPath, [...args, '--input-type=module', '-e', script], { cwd: scratch, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
}

beforeAll(() => {
  // What is packed is dist/ as built: rebuild first when the sources are newer (CI's npm ci has just built it).
  const stamp = path.join(ROOT, 'dist', '.built');
  if (!existsSync(stamp) || newest(path.join(ROOT, 'src')) > statSync(stamp).mtimeMs) execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'ignore' });
  const packed = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8' })) as Array<{ filename: string }>;
  const tarball = `file:../${packed[0]!.filename}`;
  // A lockfile naming the tarball and the dependencies' locked versions, so npm ci installs offline from its cache.
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string>; engines: Record<string, string> };
  const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; link?: boolean }> };
  const packages: Record<string, unknown> = { '': { name: 'scratch', dependencies: { envharness: tarball } } };
  for (const [key, entry] of Object.entries(lock.packages)) if (key !== '' && !entry.dev && !entry.link) packages[key] = entry;
  packages['node_modules/envharness'] = { version: pkg.version, resolved: tarball, dependencies: pkg.dependencies, bin: { envharness: 'bin/envharness.js' }, engines: pkg.engines };
  mkdirSync(scratch);
  writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module', dependencies: { envharness: tarball } }));
  writeFileSync(path.join(scratch, 'package-lock.json'), JSON.stringify({ name: 'scratch', lockfileVersion: 3, requires: true, packages }));
  execFileSync('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: scratch, stdio: 'ignore' });
  // Install scripts were skipped (no network for better-sqlite3's prebuilt binary): the checkout's build of the same version stands in.
  const binary = path.join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
  mkdirSync(path.dirname(path.join(scratch, binary)), { recursive: true });
  copyFileSync(path.join(ROOT, binary), path.join(scratch, binary));
}, 600_000);

const hasChromium = ['chromium', 'chromium-browser'].some((n) => spawnSync('which', [n]).status === 0);
if (!hasChromium) console.warn('SKIPPED: the package test\'s web open case needs Chromium (apt-get install -y chromium); .ci/run installs it.');

describe('the packed package', { timeout: 120_000 }, () => {
  it('exposes compiled JS and types for every export, and ships no tests', () => {
    const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string>>; types: string };
    expect(existsSync(path.join(installed, manifest.types))).toBe(true);
    for (const [name, conditions] of Object.entries(manifest.exports)) {
      expect(Object.keys(conditions), name).toEqual(['envharness-source', 'types', 'import', 'default']);
      for (const condition of ['types', 'import', 'default']) {
        expect(conditions[condition], `${name} ${condition}`).toMatch(condition === 'types' ? /^\.\/dist\/.*\.d\.ts$/ : /^\.\/dist\/.*\.js$/);
        expect(existsSync(path.join(installed, conditions[condition]!)), `${name} ${condition}`).toBe(true);
      }
    }
    const files = (folder: string): string[] => readdirSync(folder, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(folder, e.name)) : [path.join(folder, e.name)]));
    expect(files(installed).filter((f) => f.endsWith('.test.ts') || f.endsWith('.test.js'))).toEqual([]);
    expect(existsSync(path.join(installed, 'dist', 'prebuilt', 'template-digests.json'))).toBe(true);
  });

  it('imports the root (no native module, no server or SDK) and a subpath from dist/, in a fresh process', () => {
    const out = nodeIn("const m = await import('envharness'); const { retail } = await import('envharness/domains/retail'); console.log(JSON.stringify({ createHarness: typeof m.createHarness, retail: retail.name }));");
    expect(JSON.parse(out)).toEqual({ createHarness: 'function', retail: 'retail' });
    // The root alone, traced: every module it resolves.
    const hooks = path.join(dir, 'hooks.mjs');
    writeFileSync(hooks, "import { appendFileSync } from 'node:fs';\nexport async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(process.env.ENVHARNESS_TRACE, r.url + '\\n'); return r; }\n");
    const register = path.join(dir, 'register.mjs');
    writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(`file://${hooks}`)});\n`);
    const trace = path.join(dir, 'root.log');
    const cjs = execFileSync(process.execPath, ['--import', register, '--input-type=module', '-e', "await import('envharness'); const { createRequire } = await import('node:module'); for (const f of Object.keys(createRequire(import.meta.url).cache)) console.log('file://' + f);"], {
      cwd: scratch,
      env: { ...process.env, ENVHARNESS_TRACE: trace },
      encoding: 'utf8',
    });
    const urls = [...readFileSync(trace, 'utf8').split('\n'), ...cjs.split('\n')].filter(Boolean);
    const ours = urls.filter((u) => u.includes('/node_modules/envharness/'));
    expect(ours.length).toBeGreaterThan(10);
    expect(ours.filter((u) => !u.includes('/node_modules/envharness/dist/'))).toEqual([]);
    const packages = new Set(urls.flatMap((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1] ?? []));
    expect(['better-sqlite3', 'hono', '@hono/node-server', 'openai', '@modelcontextprotocol/sdk', 'tsx'].filter((p) => packages.has(p))).toEqual([]);
    expect(urls.filter((u) => u.endsWith('.node'))).toEqual([]);
  });

  it('type-checks an import of the root and a subpath against the shipped .d.ts files', () => {
    writeFileSync(path.join(scratch, 'use.ts'), "import { createHarness, type Harness } from 'envharness';\nimport { math } from 'envharness/domains/math';\nexport const made: Promise<Harness> = createHarness({ store: ':memory:', domains: [math], clock: () => '2026-01-01T00:00:00.000Z' });\n");
    writeFileSync(path.join(scratch, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2023', strict: true, noEmit: true, skipLibCheck: true, types: [] }, files: ['use.ts'] }));
    const tsc = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: scratch, encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });

  it("the build's template digests are the probed ones, and the installed CLI takes them", () => {
    const out = nodeIn(`
      const { builtinDomains } = await import('envharness/builtins');
      const { templateSourceDigest } = await import('envharness');
      const { applyTemplateDigests } = await import('./node_modules/envharness/dist/harness/prebuilt.js');
      const { readFileSync } = await import('node:fs');
      const table = JSON.parse(readFileSync('node_modules/envharness/dist/prebuilt/template-digests.json', 'utf8')).digests;
      const templates = builtinDomains().flatMap((d) => d.templates);
      const wrong = templates.filter((t) => table[t.id] !== templateSourceDigest(t)).map((t) => t.id);
      console.log(JSON.stringify({ count: templates.length, wrong, applied: applyTemplateDigests(templates) }));
    `);
    const result = JSON.parse(out) as { count: number; wrong: string[]; applied: number };
    expect(result.count).toBeGreaterThan(20);
    expect(result.wrong).toEqual([]);
    expect(result.applied).toBe(result.count);
  });

  // The scratch install holds the lockfile's non-dev packages only: what `npm i --omit=dev` gives a user.
  it.skipIf(!hasChromium)('web open drives Chromium from an install without dev dependencies (playwright-core is a dependency)', () => {
    const cli = (...args: string[]) => spawnSync(process.execPath, [path.join(installed, 'bin', 'envharness.js'), '--store', path.join(scratch, 'w.db'), '--json', ...args], { cwd: scratch, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', DISPLAY: '' } });
    expect(cli('generate', '--template', 'web/fill-form', '--count', '1').status).toBe(0);
    const id = nodeIn(`
      const { default: Database } = await import('better-sqlite3');
      const db = new Database('w.db', { readonly: true });
      console.log(db.prepare("select id from tasks where domain = 'web' order by seq limit 1").get().id);
    `).trim();
    const opened = cli('web', 'open', '--task', id, '--headless', '--out', path.join(scratch, 'web-open'));
    expect(opened.stderr).not.toContain('playwright-core');
    expect(opened.status).toBe(0);
    const result = JSON.parse(opened.stdout) as { screenshot: string | null };
    expect(result.screenshot).toBe(path.join(scratch, 'web-open', 'page.png'));
    expect(readFileSync(result.screenshot!).subarray(1, 4).toString()).toBe('PNG');
  });

  it('the CLI installs only the shipped set of the domain it uses, and refuses a tampered one', () => {
    const cli = (store: string, ...args: string[]) =>
      spawnSync(process.execPath, [path.join(installed, 'bin', 'envharness.js'), '--store', path.join(scratch, store), '--json', ...args], { cwd: scratch, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    const generated = cli('a.db', 'generate', '--template', 'library/borrow', '--count', '2');
    expect(generated.stderr).not.toContain('error');
    expect(generated.status).toBe(0);
    const stats = JSON.parse(cli('a.db', 'pool', 'stats').stdout) as { slices: Array<{ slice: string; split: string }> };
    const regression = [...new Set(stats.slices.filter((s) => s.split === 'regression').map((s) => s.slice.split('/')[0]))];
    expect(regression).toEqual(['library']);

    const file = path.join(installed, 'dist', 'prebuilt', 'regression-library.json');
    const original = readFileSync(file, 'utf8');
    try {
      const data = JSON.parse(original);
      data.batches[0].tasks[1].params = { ...data.batches[0].tasks[1].params, tampered: true };
      writeFileSync(file, JSON.stringify(data));
      const refused = cli('b.db', 'generate', '--template', 'library/borrow', '--count', '2');
      expect(refused.status).toBe(EXIT_CODES.LOCKFILE_MISMATCH);
      expect(refused.stdout).toContain('regression-library.json');
    } finally {
      writeFileSync(file, original);
    }
  });
});
