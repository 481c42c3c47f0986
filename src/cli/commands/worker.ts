/** CLI: envharness worker (consumes pool-refill jobs from the PostgreSQL queue). */
import type { Command } from 'commander';
import { RefillQueue } from '../../harness/refill-queue.js';
import { openHarness } from '../open.js';
import { parseIntOption, type CliContext } from '../options.js';

interface WorkerOptions {
  poll: number;
  maintenance: number;
}

export function registerWorkerCommands(program: Command, ctx: CliContext): void {
  program
    .command('worker')
    .description('generate pool refills queued by serve replicas (needs --store postgres://…); runs until SIGINT/SIGTERM')
    .option('--poll <seconds>', 'how often to look for jobs', parseIntOption('--poll', 1), 2)
    .option('--maintenance <seconds>', 'how often jobs whose worker was lost are looked for and retried', parseIntOption('--maintenance', 1), 60)
    .action(async (opts: WorkerOptions) => {
      const globals = ctx.globals();
      // The queue first: a store that is not PostgreSQL is refused before anything is opened or created.
      const queue = await RefillQueue.open({
        url: globals.store,
        maintenanceIntervalSeconds: opts.maintenance,
        onError: (error) => ctx.io.err(`envharness worker: ${error.message}`),
      });
      let harness: Awaited<ReturnType<typeof openHarness>>;
      try {
        // Opening the harness migrates the store (refill_links) before jobs read it.
        harness = await openHarness(globals);
      } catch (error) {
        await queue.close();
        throw error;
      }
      await queue.work(harness, {
        pollingIntervalSeconds: opts.poll,
        onJob: (job, batchId) => ctx.io.out(JSON.stringify({ job, batch: batchId })),
      });
      ctx.io.out(JSON.stringify({ worker: 'ready', store: harness.store.location }));
      await new Promise<void>((done) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          done();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await queue.close();
      await harness.close();
    });
}
