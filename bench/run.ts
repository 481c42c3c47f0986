/**
 * `npm run bench`: runs every bench/*.bench.ts and writes BENCHMARKS.md (medians, with the machine's core count).
 * Each file runs in a process of its own, so that no section's figures carry another's JIT state, heap or
 * leftover threads (a section's CPU columns are its process's CPU): run alone or in the full run, a section
 * measures the same thing.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NODE_HEAP_FLAGS } from '../src/core/defaults.js';
import { targetLines, type BenchSection } from './lib.js';
import { PEERS_FILE_ENV, peerFigures } from './peers.js';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);

// A child: run one file's sections and hand them back as JSON.
const childFile = process.env['ENVHARNESS_BENCH_FILE'];
const childOut = process.env['ENVHARNESS_BENCH_OUT'];
if (childFile !== undefined && childOut !== undefined) {
  const mod = (await import(pathToFileURL(join(here, childFile)).href)) as { run: () => Promise<BenchSection[]> };
  writeFileSync(childOut, JSON.stringify(await mod.run()));
  process.exit(0);
}

const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

const sections: BenchSection[] = [];
const loadBefore = loadavg();
const started = Date.now();
const scratch = mkdtempSync(join(tmpdir(), 'envharness-bench-'));
// The peers (PEERS=dir with their checkouts) are measured once, first, and every section reads those figures.
process.env[PEERS_FILE_ENV] = join(scratch, 'peers.json');
if (process.env['PEERS'] !== undefined) {
  process.stderr.write(`bench: peers in ${process.env['PEERS']}\n`);
  peerFigures();
}
// Sections that start the CLI (cli, server, postgres) run the compiled one, as users do: built once here from
// the current sources, before any section runs.
execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
for (const file of files) {
  process.stderr.write(`bench: ${file}\n`);
  const out = join(scratch, `${file}.json`);
  // Each section's process runs with the node flags the CLI runs with (bin/envharness.js's first line).
  const child = spawnSync(process.execPath, [...NODE_HEAP_FLAGS, ...process.execArgv, fileURLToPath(import.meta.url)], {
    env: { ...process.env, ENVHARNESS_BENCH_FILE: file, ENVHARNESS_BENCH_OUT: out },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (child.status !== 0) {
    rmSync(scratch, { recursive: true, force: true });
    throw new Error(`bench ${file} failed (exit ${child.status ?? child.signal})`);
  }
  sections.push(...(JSON.parse(readFileSync(out, 'utf8')) as BenchSection[]));
}
rmSync(scratch, { recursive: true, force: true });

const cpu = cpus()[0]?.model ?? 'unknown CPU';
const lines: string[] = [
  '# Benchmarks',
  '',
  `Written by \`npm run bench\`. Machine: ${availableParallelism()} cores (${cpu}), ` +
    `${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}. Figures are medians of several runs; ` +
    'a peer column says whether the peer ran in this run (PEERS set; bench/peers/README.md) or comes from another run. ' +
    `Every section runs in a node process started with \`${NODE_HEAP_FLAGS.join(' ')}\`, as the \`envharness\` command starts node ` +
    '(V8\'s default semi-space is 16 MiB; docs/deploy.md, "V8 young generation", has what the default costs).',
  '',
  `Load average (1/5/15 min) when the run started: ${loadBefore.map((x) => x.toFixed(2)).join(' / ')}; when it ended: ` +
    `${loadavg().map((x) => x.toFixed(2)).join(' / ')}; the run took ${((Date.now() - started) / 60_000).toFixed(1)} min. With a load above the core count, ` +
    'wall-clock figures are lower bounds: read the CPU-time columns and the same-run ratios.',
  '',
];
lines.push(...targetLines(sections));
for (const section of sections) {
  lines.push(`## ${section.title}`, '', section.description, '');
  const columns = [...new Set(section.rows.flatMap((r) => Object.keys(r)))];
  if (columns.length > 0) {
    lines.push(`| ${columns.join(' | ')} |`, `| ${columns.map(() => '---').join(' | ')} |`);
    for (const row of section.rows) lines.push(`| ${columns.map((c) => String(row[c] ?? '')).join(' | ')} |`);
    lines.push('');
  }
  for (const note of section.notes ?? []) lines.push(`- ${note}`);
  if (section.notes?.length) lines.push('');
}
const out = join(here, '..', 'BENCHMARKS.md');
if (only.length === 0) {
  writeFileSync(out, lines.join('\n'));
  process.stderr.write(`wrote ${out}\n`);
} else {
  process.stdout.write(lines.join('\n'));
}
