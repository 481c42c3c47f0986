/** CLI: snapshot create|list|show|export|import|restore|diff. */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { EnvHarnessError } from '../../core/index.js';
import type { CliContext } from '../options.js';
import { withHarness } from '../open.js';
import { colors, printJson, table } from '../output.js';

export function registerSnapshotCommands(program: Command, ctx: CliContext): void {
  const snapshot = program.command('snapshot').description('complete environment versions: create, export, import, restore, diff');
  snapshot
    .command('create')
    .option('--label <text>', 'a label to remember it by')
    .action(async (opts: { label?: string }) => {
      await withHarness(ctx.globals(), async (h) => {
        const snap = await h.snapshot({ label: opts.label });
        if (ctx.globals().json) printJson(ctx.io, snap);
        else ctx.io.out(`snapshot ${colors.bold(snap.id)}`);
      });
    });
  snapshot.command('list').action(async () => {
    await withHarness(ctx.globals(), async (h) => {
      const snaps = await h.listSnapshots();
      if (ctx.globals().json) return printJson(ctx.io, snaps);
      ctx.io.out(table(snaps.map((s) => ({
        id: s.id.slice(0, 12),
        label: s.label ?? '',
        created: s.createdAt,
        regression: s.pool.regression.count,
        dynamic: s.pool.dynamic.count,
        heldout: s.pool.heldout.count,
        templates: s.templates.length,
      }))));
    });
  });
  snapshot.command('show <id>').action(async (id: string) => {
    await withHarness(ctx.globals(), async (h) => printJson(ctx.io, await h.getSnapshot(id)));
  });
  snapshot
    .command('export [id]')
    .description('write a snapshot and its pool as one file (default: a new snapshot of now)')
    .requiredOption('--out <file>', 'output file (.jsonl)')
    .action(async (id: string | undefined, opts: { out: string }) => {
      await withHarness(ctx.globals(), async (h) => {
        const { snapshot: snap, text } = await h.exportSnapshot(id);
        writeFileSync(opts.out, text);
        const sha = createHash('sha256').update(text).digest('hex');
        if (ctx.globals().json) printJson(ctx.io, { snapshot: snap.id, file: opts.out, sha256: sha, bytes: Buffer.byteLength(text) });
        else ctx.io.out(`exported snapshot ${snap.id.slice(0, 12)} to ${opts.out} (sha256 ${sha})`);
      });
    });
  snapshot
    .command('import <file>')
    .description('import an exported snapshot into this store and restore it')
    .action(async (file: string) => {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (error) {
        throw new EnvHarnessError('CONFIG_INVALID', `cannot read ${file}: ${(error as Error).message}`, { cause: error });
      }
      await withHarness(ctx.globals(), async (h) => {
        const snap = await h.importSnapshot(text, file);
        if (ctx.globals().json) printJson(ctx.io, snap);
        else ctx.io.out(`imported and restored snapshot ${snap.id.slice(0, 12)} (${snap.pool.dynamic.count} dynamic, ${snap.pool.regression.count} regression tasks)`);
      });
    });
  snapshot.command('restore <id>').action(async (id: string) => {
    await withHarness(ctx.globals(), async (h) => {
      const snap = await h.restore(id);
      if (ctx.globals().json) printJson(ctx.io, snap);
      else ctx.io.out(`restored snapshot ${snap.id.slice(0, 12)}`);
    });
  });
  snapshot.command('diff <a> <b>').action(async (a: string, b: string) => {
    await withHarness(ctx.globals(), async (h) => printJson(ctx.io, await h.diffSnapshots(a, b)));
  });
}
