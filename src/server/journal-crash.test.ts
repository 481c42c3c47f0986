/**
 * The step journal against a real `envharness serve` (default durability): four clients step concurrently,
 * the server is SIGKILLed as soon as 200 steps were answered; every answered step is then in SQLite (after a
 * store open applies the journal), each once, byte for byte what an uncrashed server on the same store,
 * tasks, seeds and actions stores; restarting the server on that file applies nothing twice.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../cli/clock.js';
import { createSqliteStore } from '../storage/sqlite/index.js';
import { journalPath, readJournal } from '../storage/sqlite/step-journal.js';
import { createSocketClient, prepareStore, spawnServe, stopServe, type FixtureTasks, type RawResponse } from './testing/fixture.js';

const TOKEN = 'journal-crash-token-0123456789abcdef';
const CLIENTS = 4;
const ACKED = 200;
let dir = '';
let base = '';
let tasks: FixtureTasks;
let copies = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'envharness-journal-crash-'));
  ({ path: base, tasks } = await prepareStore(dir));
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function freshStore(): string {
  const file = join(dir, `copy-${copies++}.db`);
  copyFileSync(base, file);
  return file;
}

/** The i-th action of every client (the same in both runs). */
function action(i: number): string {
  const a = i % 3 === 0 ? { type: 'tool', tool: 'list_items', args: {} } : { type: 'tool', tool: 'get_stock', args: { item: i % 2 === 0 ? 'widget-1' : 'widget-2' } };
  return JSON.stringify({ action: a });
}

async function createEpisode(port: number, seed: number): Promise<{ id: string; token: string; attemptId: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/episodes`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ taskId: tasks.endless, seed }) });
  expect(res.status).toBe(201);
  const json = (await res.json()) as { episode: { id: string; attemptId: string }; token: string };
  return { id: json.episode.id, token: json.token, attemptId: json.episode.attemptId };
}

async function step(port: number, ep: { id: string; token: string }, i: number): Promise<{ status: number; step?: number }> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/episodes/${ep.id}/step`, { method: 'POST', headers: { authorization: `Bearer ${ep.token}`, 'content-type': 'application/json' }, body: action(i) });
  const json = (await res.json()) as { info?: { step: number } };
  return { status: res.status, ...(json.info !== undefined ? { step: json.info.step } : {}) };
}

/** Stored transition bodies of an attempt, in step order, with the attempt id replaced (it differs between runs); on a plain connection (no journal applied). */
function bodies(file: string, attemptId: string): string[] {
  const db = new BetterSqlite3(file);
  try {
    const rows = db.prepare('SELECT t.body FROM episode_keys k JOIN transitions t ON t.episode_seq = k.seq WHERE k.id = ? ORDER BY k.segment, t.step').pluck().all(attemptId) as string[];
    return rows.map((b) => b.split(JSON.stringify(attemptId)).join('"<attempt>"'));
  } finally {
    db.close();
  }
}

interface Round {
  file: string;
  episodes: Array<{ id: string; token: string; attemptId: string }>;
  /** Stored steps per client, and their bodies. */
  stored: number[][];
  crashed: string[][];
  journalOnly: number;
}

/** Four clients step until 200 answers, then SIGKILL; checks what a store open finds. */
async function crashRound(): Promise<Round> {
  const file = freshStore();
  const server = await spawnServe(file, TOKEN);
  const episodes = await Promise.all(Array.from({ length: CLIENTS }, (_, seed) => createEpisode(server.port, seed)));
  const acked = episodes.map(() => [] as number[]);
  let total = 0;
  let killed = false;
  // Lean socket clients: the kill follows the 200th answer by far less than the journal's 20 ms feed window (`FEED_MS`).
  const clients = episodes.map(() => createSocketClient(server.port));
  await Promise.all(
    episodes.map(async (ep, k) => {
      for (let i = 0; !killed; i++) {
        let r: RawResponse;
        try {
          r = await clients[k]!.request({ path: `/v1/episodes/${ep.id}/step`, token: ep.token, body: action(i) });
        } catch {
          if (killed) return;
          throw new Error(`the server went away before the kill: ${server.stderr()}`);
        }
        if (killed) return;
        if (++total === ACKED) {
          killed = true;
          server.child.kill('SIGKILL');
        }
        expect(r.status, r.text).toBe(200);
        acked[k]!.push((r.json as { info: { step: number } }).info.step);
      }
    }),
  );
  for (const c of clients) c.close();
  await new Promise<void>((resolve) => (server.child.exitCode !== null || server.child.signalCode !== null ? resolve() : server.child.once('exit', () => resolve())));
  expect(server.child.signalCode).toBe('SIGKILL');
  expect(acked.reduce((n, a) => n + a.length, 0)).toBe(ACKED);

  // What SQLite held at the kill (a plain connection applies no journal), and what only the journal held.
  const inSqlite = episodes.map((ep) => bodies(file, ep.attemptId).length);
  const journalOnly = acked.reduce((n, a, k) => n + Math.max(0, a.length - inSqlite[k]!), 0);

  // A store open applies the journal: every answered step, each once, steps 1..n with no gap.
  const store = createSqliteStore(file, { now: systemClock });
  const stored: number[][] = [];
  try {
    expect(await store.checkIntegrity()).toEqual([]);
    for (const [k, ep] of episodes.entries()) {
      const steps = (await store.listTransitions(ep.attemptId)).map((t) => t.step);
      expect(new Set(steps).size).toBe(steps.length);
      expect(steps).toEqual(Array.from({ length: steps.length }, (_, i) => i + 1));
      // Every answered step; at most the one in flight at the kill beyond them.
      expect(steps.length).toBeGreaterThanOrEqual(acked[k]!.length);
      expect(steps.length).toBeLessThanOrEqual(acked[k]!.length + 1);
      expect(acked[k]).toEqual(steps.slice(0, acked[k]!.length));
      stored.push(steps);
    }
  } finally {
    await store.close();
  }
  return { file, episodes, stored, crashed: episodes.map((ep) => bodies(file, ep.attemptId)), journalOnly };
}

describe('serve (committed, step journal): SIGKILL right after answering', () => {
  it(`keeps every one of ${ACKED} answered steps, once, byte-identical to an uncrashed run; a restart applies nothing twice`, { timeout: 180_000 }, async () => {
    // Whether the last answers were fed to SQLite before the kill is timing: rounds until one kill caught
    // answered steps in the journal only (each round is checked in full either way).
    const rounds: Round[] = [];
    while (rounds.length < 4 && !rounds.some((r) => r.journalOnly > 0)) rounds.push(await crashRound());
    const round = rounds.find((r) => r.journalOnly > 0);
    expect(round, 'no kill landed before SQLite had every answered step: the journal was not exercised').toBeDefined();
    const { file, episodes, stored, crashed } = round!;

    // A restart on the killed server's files applies nothing twice, and starts an empty journal.
    const again = await spawnServe(file, TOKEN);
    expect((await fetch(`http://127.0.0.1:${again.port}/v1/health`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect(readJournal(journalPath(file))!.entries).toEqual([]);
    expect(await stopServe(again.child)).toBe(0);
    expect(episodes.map((ep) => bodies(file, ep.attemptId))).toEqual(crashed);

    // The same episodes on an uncrashed server, stopped cleanly: the same bytes.
    const cleanFile = freshStore();
    const clean = await spawnServe(cleanFile, TOKEN);
    const cleanEpisodes = await Promise.all(Array.from({ length: CLIENTS }, (_, seed) => createEpisode(clean.port, seed)));
    await Promise.all(
      cleanEpisodes.map(async (ep, k) => {
        for (let i = 0; i < stored[k]!.length; i++) expect((await step(clean.port, ep, i)).status).toBe(200);
      }),
    );
    expect(await stopServe(clean.child)).toBe(0);
    for (const [k, ep] of cleanEpisodes.entries()) expect(crashed[k]).toEqual(bodies(cleanFile, ep.attemptId));
    process.stderr.write(`journal SIGKILL: ${rounds.length} round(s); ${ACKED} answered, ${round!.journalOnly} of them only in the journal at the kill\n`);
  });
});
