/** `envharness web open` (the web domain's command) against a real SQLite store: HTML, screenshot, typed errors. */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EnvHarnessError, openStore, type CommandContext } from '../../../index.js';
import { instantiateTask } from '../../../generation/index.js';
import { WEB_TEMPLATES } from '../templates.js';
import { findChromium } from './chromium.js';
import { webCommands } from './commands.js';
import { systemClock } from '../../../cli/clock.js';

const dir = mkdtempSync(join(tmpdir(), 'envharness-web-open-'));
const storePath = join(dir, 'web.db');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function context(out: string[]): CommandContext {
  return {
    store: storePath,
    json: true,
    // No display: the command must not try to open a window.
    env: { PATH: process.env.PATH, ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}) },
    openStore: () => openStore(storePath, { clock: systemClock }),
    agent: async () => {
      throw new Error('web open runs no agent');
    },
    out: (t) => out.push(t),
    err: () => {},
    printJson: (v) => out.push(JSON.stringify(v)),
    table: () => '',
    style: { bold: (t) => t, yellow: (t) => t },
    progress: () => ({ update() {}, stop() {} }),
  };
}

describe('envharness web open', () => {
  const open = webCommands().find((c) => c.path.join(' ') === 'web open')!;
  const task = instantiateTask(WEB_TEMPLATES[0]!, { level: 3, seed: 7, index: 0 });

  it('writes the first page as HTML with data-bid attributes and, with Chromium, a screenshot', async () => {
    const store = await openStore(storePath, { clock: systemClock });
    await store.putTasks([{ ...task, split: 'dynamic', status: 'active', batchId: 'test', seq: 1 }]);
    await store.close();
    const out: string[] = [];
    await open.run({ task: task.id, out: join(dir, 'page'), headless: true }, context(out));
    const result = JSON.parse(out.at(-1)!) as { html: string; screenshot: string | null; live: boolean; title: string };
    const html = readFileSync(result.html, 'utf8');
    expect(html).toContain('data-bid="1"');
    expect(html).toContain(`<title>${result.title}</title>`);
    expect(result.live).toBe(false);
    if (findChromium(process.env) !== undefined) {
      expect(existsSync(result.screenshot!)).toBe(true);
      expect(readFileSync(result.screenshot!).subarray(1, 4).toString()).toBe('PNG');
    }
  }, 60_000);

  it('refuses an unknown task with TASK_NOT_FOUND', async () => {
    await expect(open.run({ task: 'nope', headless: true }, context([]))).rejects.toSatisfy((e) => e instanceof EnvHarnessError && e.code === 'TASK_NOT_FOUND');
  });
});
