#!/usr/bin/env -S node --max-semi-space-size=64
// Runs the compiled CLI (dist/, built on install by `prepare`), or, in a checkout, the TypeScript sources
// through tsx when dist/ is missing or older than any source file: a test or an edited checkout never runs
// stale JavaScript.
// The first line starts node with a 64 MiB semi-space (core's NODE_HEAP_FLAGS; V8's default is 16): episodes
// make many objects that live a few steps, and the default young generation copies most of them into the old
// one (docs/deploy.md, "V8 young generation"). `node bin/envharness.js` skips that line: pass the flag yourself.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = `${root}dist/.built`;

/** The newest modification time under dir (a few milliseconds for the whole src/ tree). */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    const t = entry.isDirectory() ? newest(path) : statSync(path).mtimeMs;
    if (t > latest) latest = t;
  }
  return latest;
}

// A TypeScript module on the command line (serve --domain-module x.ts) imports the sources' modules: run
// the CLI from the same sources, so both share one copy of every module.
const tsArgument = process.argv.slice(2).some((a) => /\.[cm]?ts$/.test(a));
// An installed copy (under node_modules) is always built, whatever the file times its unpacking left
// (they are the time of extraction); only a checkout compares them.
const installed = /[\\/]node_modules[\\/]/.test(root);
const built = !tsArgument && existsSync(stamp) && (installed || !existsSync(`${root}src`) || newest(`${root}src`) <= statSync(stamp).mtimeMs);
// A reader that went away (`envharness pool stats | head`) ends the command quietly, as SIGPIPE ends a
// C program, instead of an unhandled EPIPE stack trace. Writes to the store are transactions either way.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

let main;
if (built) {
  ({ main } = await import('../dist/cli/main.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
process.exitCode = await main(process.argv);
