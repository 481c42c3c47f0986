/** `npm run bench`: runs every bench/*.bench.ts and writes BENCHMARKS.md (medians, with the machine's core count). */
import { readdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchSection } from './lib.js';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);

const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

const sections: BenchSection[] = [];
const loadBefore = loadavg();
const started = Date.now();
for (const file of files) {
  process.stderr.write(`bench: ${file}\n`);
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { run: () => Promise<BenchSection[]> };
  sections.push(...(await mod.run()));
}

const cpu = cpus()[0]?.model ?? 'unknown CPU';
const lines: string[] = [
  '# Benchmarks',
  '',
  `Written by \`npm run bench\`. Machine: ${availableParallelism()} cores (${cpu}), ` +
    `${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}. Figures are medians of several runs; ` +
    'peers were measured on the same machine kind (see the research notes), so compare ratios, not absolutes.',
  '',
  `Load average (1/5/15 min) when the run started: ${loadBefore.map((x) => x.toFixed(2)).join(' / ')}; when it ended: ` +
    `${loadavg().map((x) => x.toFixed(2)).join(' / ')}; the run took ${((Date.now() - started) / 60_000).toFixed(1)} min. With a load above the core count, ` +
    'wall-clock figures are lower bounds: read the CPU-time columns and the same-run ratios.',
  '',
];
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
