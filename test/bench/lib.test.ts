/** The bench's formatting helpers: what BENCHMARKS.md says about a target must agree with the figure beside it. */
import { describe, expect, it } from 'vitest';
import { costPct, headingAnchor, interleavedRounds, serialisingRecorder, spreadCostBound, targetLines, type BenchSection, type BenchTarget } from '../../bench/lib.js';

describe('costPct', () => {
  it('rounds to a whole percentage away from the bound', () => {
    expect(costPct(0.284)).toBe('28%');
    expect(costPct(0.316)).toBe('32%');
    expect(costPct(0.3)).toBe('30%');
  });

  it('keeps a decimal where rounding would land on the bound from either side', () => {
    expect(costPct(0.3042)).toBe('30.4%');
    expect(costPct(0.2961)).toBe('29.6%');
    expect(costPct(0.8451, 0.85)).toBe('84.5%');
    expect(costPct(0.8449, 0.85)).toBe('84%');
    expect(costPct(0.8449)).toBe('84%');
  });
});

describe('spreadCostBound', () => {
  it('spreads the recorded CPU over the cores, never below the episode\'s own CPU', () => {
    // 10 µs an episode, 37 µs with the rows written: 18.5 µs a core on 2 cores, so at least 46% of the throughput.
    expect(spreadCostBound(10, 37, 2)).toBeCloseTo(1 - 10 / 18.5, 10);
    // Recording work that fits on the other core costs nothing at best.
    expect(spreadCostBound(10, 19, 2)).toBe(0);
    // One core: the whole work is on the episode's thread.
    expect(spreadCostBound(10, 37, 1)).toBeCloseTo(1 - 10 / 37, 10);
  });

  it('refuses a bound it cannot give', () => {
    expect(() => spreadCostBound(0, 37, 2)).toThrow(RangeError);
    expect(() => spreadCostBound(10, 37, 0)).toThrow(RangeError);
  });
});

describe('interleavedRounds', () => {
  it('runs every run once a round, in order, and gives each its rates per round and its thread CPU per op', async () => {
    const order: string[] = [];
    const runs = ['a', 'b', 'c'].map((name) => async () => void order.push(name));
    // A thread clock that moves 10 µs each time it is read: 10 µs between the reads around a run of 4 ops.
    let clock = 0;
    const measured = await interleavedRounds(runs, 3, 4, () => (clock += 10));
    expect(order).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c']);
    expect(measured.map((m) => m.rates.length)).toEqual([3, 3, 3]);
    for (const m of measured) {
      expect(m.rates.every((rate) => rate > 0)).toBe(true);
      expect(m.threadUs).toBe(2.5);
      expect(m.cpuUs).toBeGreaterThanOrEqual(0);
    }
  });

  it('gives no thread CPU where the thread clock cannot be read', async () => {
    const [m] = await interleavedRounds([async () => undefined], 2, 1);
    expect(m!.threadUs).toBeUndefined();
  });
});

describe('serialisingRecorder', () => {
  // Reads of a field count as the serialiser walking the value: a recorder that skipped the work would read none.
  const counted = () => {
    const reads = { n: 0 };
    const value = {
      get text() {
        reads.n++;
        return 'é';
      },
    };
    return { reads, value };
  };

  it.each([false, true])('serialises every transition and final record it is given (encode: %s), and keeps nothing', async (encode) => {
    const recorder = serialisingRecorder(encode);
    const transition = counted();
    const record = counted();
    recorder.begin(record.value as never);
    expect(record.reads.n).toBe(0);
    recorder.record(transition.value as never);
    recorder.end(record.value as never);
    expect(transition.reads.n).toBe(1);
    expect(record.reads.n).toBe(1);
    await expect(recorder.flush()).resolves.toBeUndefined();
  });

  it('refuses what canonical JSON refuses, as a store recorder would', () => {
    expect(() => serialisingRecorder().end({ reward: Number.NaN } as never)).toThrow(/finite|NaN/i);
  });
});

describe('headingAnchor', () => {
  it('gives the anchor GitHub gives a heading', () => {
    expect(headingAnchor('Runtime: recording transitions to SQLite')).toBe('runtime-recording-transitions-to-sqlite');
    expect(headingAnchor('Storage: appending transitions (SQLite, WAL)')).toBe('storage-appending-transitions-sqlite-wal');
    expect(headingAnchor('CLI: generation through envharness generate')).toBe('cli-generation-through-envharness-generate');
  });
});

describe('targetLines', () => {
  const target = (workload: string, met: boolean): BenchTarget => ({
    source: 'issue 18',
    workload,
    target: '≤ 30%',
    figure: met ? '28%' : '31%',
    reference: met ? '' : 'raw: 40%',
    met,
  });
  const section = (title: string, targets?: BenchTarget[]): BenchSection => ({ title, description: '', rows: [], ...(targets ? { targets } : {}) });

  it('lists every section\'s targets in order, counts the met ones and marks the missed ones', () => {
    const lines = targetLines([section('A: one', [target('a', true)]), section('B'), section('C: two', [target('c', false)])]);
    expect(lines[0]).toBe('## Targets checked in this run');
    expect(lines.join('\n')).toContain('(1 of 2 met in this run)');
    const rows = lines.filter((l) => l.startsWith('| issue 18'));
    expect(rows).toEqual([
      '| issue 18 | a | ≤ 30% | 28% | — | met | [A: one](#a-one) |',
      '| issue 18 | c | ≤ 30% | 31% | raw: 40% | **missed** | [C: two](#c-two) |',
    ]);
  });

  it('writes nothing when no section checks a target', () => {
    expect(targetLines([section('A'), section('B', [])])).toEqual([]);
  });
});
