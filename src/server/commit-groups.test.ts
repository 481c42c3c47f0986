/**
 * Group commit of steps (episodes.ts, `commit`): a lone client's step commits at once, concurrent steps read in
 * one event-loop turn share a transaction, and every step is durable before its answer either way.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../harness/harness.js';
import { createInventoryDomain, makeInventoryTask } from '../runtime/testing/index.js';
import { systemClock } from '../cli/clock.js';
import type { Store, Transition } from '../index.js';
import { createServer, type EnvHarnessServer } from './index.js';
import type { ServerEpisode } from './episodes.js';

const task = { ...makeInventoryTask({ budget: { steps: 10_000 } }), split: 'heldout' as const, status: 'active' as const, batchId: 'groups', seq: 1 };
const ACTION = JSON.stringify({ action: { type: 'tool', tool: 'get_stock', args: { item: 'widget-1' } } });

let dir: string;
let harness: Harness;
let server: EnvHarnessServer;
let port: number;
/** Episode tokens, for requests over sockets. */
const tokens = new Map<ServerEpisode, string>();
/** Every appendTransitions call the store got, by the number of transitions it held. */
const calls: number[] = [];
let slowStore = false;
/** The store's next transition commits fail. */
let failStore = false;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'envharness-groups-'));
  harness = await createHarness({ clock: systemClock, store: join(dir, 'store.db'), domains: [createInventoryDomain()] });
  await harness.initialize({ seed: 1 });
  await harness.store.putTasks([task]);
  const store = harness.store as Store;
  const append = store.appendTransitions.bind(store);
  store.appendTransitions = async (transitions: readonly Transition[], options) => {
    // A slow store: an answer given before the commit settled would be seen before `calls` grew.
    if (slowStore) await new Promise((resolve) => setTimeout(resolve, 2));
    if (failStore) throw new Error('the disk is on fire');
    await append(transitions, options);
    calls.push(transitions.length);
  };
  server = createServer({ harness, port: 0 });
  ({ port } = await server.listen());
});
afterAll(async () => {
  await server.close();
  await harness.close();
  rmSync(dir, { recursive: true, force: true });
});

async function newEpisode(): Promise<{ ep: ServerEpisode; attemptId: string }> {
  const created = await server.episodes.create({ taskId: task.id, seed: 0 } as Parameters<EnvHarnessServer['episodes']['create']>[0]);
  tokens.set(created.ep, created.token);
  return { ep: created.ep, attemptId: created.ep.episode!.id! };
}

async function stored(attemptId: string): Promise<number> {
  return (await harness.store.listTransitions(attemptId)).length;
}

describe('group commit', () => {
  it('commits a lone client’s steps at once, each before its answer', async () => {
    const { ep, attemptId } = await newEpisode();
    const before = { ...server.episodes.commitStats };
    slowStore = true;
    for (let i = 1; i <= 20; i++) {
      const committed = calls.length;
      const reply = await server.episodes.step(ep, ACTION, undefined);
      expect(reply.status).toBe(200);
      expect(calls.length).toBe(committed + 1);
      // Acknowledged means durable: the transition is in the store when the answer is given.
      expect(await stored(attemptId)).toBe(i);
      // The client's next request arrives in a later event-loop turn.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const stats = server.episodes.commitStats;
    expect(stats.groups - before.groups).toBe(20);
    // After the first lone group, the others skip the wait.
    expect(stats.lone - before.lone).toBeGreaterThanOrEqual(19);
    slowStore = false;
  });

  it('answers a keyed step once durable, with its key busy until then; a transient failure is not remembered, a reply is replayed byte for byte', async () => {
    const { ep, attemptId } = await newEpisode();
    slowStore = true;
    try {
      const committed = calls.length;
      const first = server.episodes.step(ep, ACTION, 'k-1').then((reply) => ({ reply, calls: calls.length }));
      // While k-1 is committed: the same key is 409 EPISODE_BUSY, and so is another key (the episode is busy).
      expect(JSON.parse((await server.episodes.step(ep, ACTION, 'k-1')).body)).toMatchObject({ code: 'EPISODE_BUSY' });
      expect(JSON.parse((await server.episodes.step(ep, ACTION, 'k-2')).body)).toMatchObject({ code: 'EPISODE_BUSY' });
      const { reply, calls: atAnswer } = await first;
      expect(reply.status).toBe(200);
      // Acknowledged means durable: the transition was committed before the answer.
      expect(atAnswer).toBe(committed + 1);
      expect(await stored(attemptId)).toBe(1);
      const again = await server.episodes.step(ep, ACTION, 'k-1');
      expect(again.headers?.['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(reply.body);
      // k-2 was refused as busy (transient): not remembered, so it applies now.
      const second = await server.episodes.step(ep, ACTION, 'k-2');
      expect(second.headers?.['idempotent-replayed']).toBeUndefined();
      expect((JSON.parse(second.body) as { info: { step: number } }).info.step).toBe(2);
      // A body too long to be remembered by its text (by its fingerprint): the same request in other bytes is replayed, another is 422.
      const padded = ACTION.replace('{', `{${' '.repeat(2000)}`);
      const long = await server.episodes.step(ep, padded, 'k-long');
      expect((JSON.parse(long.body) as { info: { step: number } }).info.step).toBe(3);
      expect((await server.episodes.step(ep, ACTION, 'k-long')).body).toBe(long.body);
      expect((await server.episodes.step(ep, padded, 'k-long')).body).toBe(long.body);
      expect(JSON.parse((await server.episodes.step(ep, ACTION.replace('widget-1', 'widget-2'), 'k-long')).body)).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT' });
      expect(JSON.parse((await server.episodes.step(ep, ACTION.replace('widget-1', 'widget-2'), 'k-2')).body)).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT' });
      // A failed commit (5xx) is not remembered either: the same key is tried again, not replayed.
      failStore = true;
      const failed = await server.episodes.step(ep, ACTION, 'k-3');
      expect(failed.status).toBeGreaterThanOrEqual(500);
      const retried = await server.episodes.step(ep, ACTION, 'k-3');
      expect(retried.headers?.['idempotent-replayed']).toBeUndefined();
      expect(retried.status).toBeGreaterThanOrEqual(500);
    } finally {
      slowStore = false;
      failStore = false;
    }
  });

  it('gathers concurrent steps of one turn into one transaction, durable before any answer', async () => {
    const eps = await Promise.all(Array.from({ length: 8 }, () => newEpisode()));
    // A lone step first, so that the next group is the one a lone client would skip the wait for.
    await server.episodes.step(eps[0]!.ep, ACTION, undefined);
    for (let round = 0; round < 3; round++) {
      const from = calls.length;
      const counts = await Promise.all(
        eps.map(async ({ ep, attemptId }) => {
          const reply = await server.episodes.step(ep, ACTION, undefined);
          expect(reply.status).toBe(200);
          return stored(attemptId);
        }),
      );
      expect(counts).toEqual(eps.map((_, i) => (i === 0 ? round + 2 : round + 1)));
      const transactions = calls.slice(from);
      expect(transactions.reduce((a, b) => a + b, 0)).toBe(8);
      // After a lone group the first step may go alone and the other 7 gather; after that, all 8 share one.
      if (round === 0) expect(transactions.length).toBeLessThanOrEqual(2);
      else expect(transactions).toEqual([8]);
    }
  });

  it('gathers steps read from many sockets in one I/O phase, after a lone client’s steps too', async () => {
    const eps = await Promise.all(Array.from({ length: 8 }, () => newEpisode()));
    const sockets = await Promise.all(eps.map(() => new Promise<Socket>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => resolve(socket));
    })));
    const request = (ep: ServerEpisode, token: string) => `POST /v1/episodes/${ep.id}/step HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(ACTION)}\r\n\r\n${ACTION}`;
    try {
      for (let round = -1; round < 2; round++) {
        if (round === 0) {
          // A lone step: the next group starts from "the last group held one episode".
          await server.episodes.step(eps[0]!.ep, ACTION, undefined);
          await new Promise((resolve) => setImmediate(resolve));
        }
        const from = { ...server.episodes.commitStats };
        const calls0 = calls.length;
        const answers = sockets.map((socket) => new Promise<string>((resolve) => {
          let text = '';
          const onData = (d: Buffer) => {
            text += d.toString();
            if (/\r\n\r\n\{.*\}$/s.test(text)) {
              socket.off('data', onData);
              resolve(text);
            }
          };
          socket.on('data', onData);
        }));
        eps.forEach(({ ep }, i) => sockets[i]!.write(request(ep, tokens.get(ep)!)));
        // Hold the event loop while the requests land: the server then reads all 8 in one I/O phase.
        const until = performance.now() + 50;
        while (performance.now() < until);
        for (const answer of await Promise.all(answers)) expect(answer.startsWith('HTTP/1.1 200')).toBe(true);
        // Round -1 only lets the server accept the connections (before that, their requests come a turn apart).
        if (round < 0) continue;
        const stats = server.episodes.commitStats;
        expect(stats.episodes - from.episodes).toBe(8);
        const transactions = calls.slice(calls0);
        expect(transactions.reduce((a, b) => a + b, 0)).toBe(8);
        // Round 0: the first step read may commit at once, the other 7 gather; then all 8 share one transaction.
        if (round === 0) expect(transactions.length).toBeLessThanOrEqual(2);
        else expect(transactions).toEqual([8]);
      }
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });
});
