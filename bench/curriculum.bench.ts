/** Curriculum latency: draw and update at 10 and 10,000 slices, against reasoning-gym's CompositeDataset. */
import { createRng } from '../src/core/index.js';
import { createCurriculum, type Curriculum, type EpisodeResult, type StrategyName } from '../src/curriculum/index.js';
import { makeSlices, simulate } from '../src/curriculum/fixtures.js';
import { SumTree } from '../src/curriculum/sum-tree.js';
import { fmt, measure, PEER_RUNS, type BenchRow, type BenchSection, type BenchTarget } from './lib.js';

const STRATEGIES: StrategyName[] = ['uniform', 'threshold', 'learning-progress', 'learnability', 'prioritized-replay'];
const SIZES = [10, 10_000];

/** reasoning-gym's CompositeDataset, from another run (not measured here): see the notes for its workload. */
const COMPOSITE_DATASET = {
  workload:
    'CompositeDataset with uniform weights over 9 generators (spell_backward, chain_sum, leg_counting, family_relationships, ' +
    'shortest_path, maze, basic_arithmetic, mini_sudoku, knights_knaves), default configs',
  drawMicros: 10,
  weightUpdateMicros: 0.31,
};

/** A curriculum warmed up by a synthetic agent, so windows, weights and replay buffers are populated. */
function warmCurriculum(strategy: StrategyName, slices: number): Curriculum {
  const curriculum = createCurriculum({
    strategy,
    slices: makeSlices(slices, 8),
    // Small buffers fill quickly, so the 10k-slice bench measures replay draws too.
    config: { replayConfig: { capacity: 8 } },
  });
  simulate(curriculum, {
    episodes: Math.max(20_000, slices * 12),
    batch: 64,
    seed: `bench-${strategy}-${slices}`,
    taskSpread: 2,
    skill: (slice) => 1 + (Number(slice.slice(3)) % 7),
  });
  return curriculum;
}

/** Results to feed back, drawn from the curriculum itself (mostly at each slice's current level). */
function makeResults(curriculum: Curriculum, count: number, seed: string): EpisodeResult[] {
  const rng = createRng(['bench-results', seed]);
  return Array.from({ length: count }, (_, k) => {
    const draw = curriculum.draw(rng);
    return { slice: draw.slice, level: draw.level, success: rng.chance(0.5) ? 1 : 0, taskId: draw.taskId ?? `bench-${seed}-${k}` };
  });
}

/** Issue 18's target for the slowest strategy's update at 10,000 slices. */
function updateTarget(slowest: { strategy: StrategyName; ns: number }): BenchTarget {
  return {
    source: 'issue 18',
    workload: `curriculum update, 1 result, 10,000 slices, the slowest strategy (${slowest.strategy})`,
    target: '≤ 1,000 ns for every strategy',
    figure: `${fmt(slowest.ns)} ns`,
    reference: '',
    met: slowest.ns <= 1000,
  };
}

export async function run(): Promise<BenchSection[]> {
  const rows: BenchRow[] = [];
  let slowest: { strategy: StrategyName; ns: number } | undefined;
  for (const slices of SIZES) {
    for (const strategy of STRATEGIES) {
      const curriculum = warmCurriculum(strategy, slices);
      const rng = createRng(['bench-draw', strategy, slices]);
      const draw = measure((n) => {
        for (let k = 0; k < n; k++) curriculum.draw(rng);
      });
      const results = makeResults(curriculum, 4096, `${strategy}-${slices}`);
      let at = 0;
      const single = measure((n) => {
        for (let k = 0; k < n; k++) {
          curriculum.update([results[at]!]);
          at = (at + 1) & 4095;
        }
      });
      const batches = Array.from({ length: 64 }, (_, b) => results.slice(b * 64, b * 64 + 64));
      let batchAt = 0;
      const batched = measure((n) => {
        const updates = Math.max(1, Math.round(n / 64));
        for (let k = 0; k < updates; k++) {
          curriculum.update(batches[batchAt]!);
          batchAt = (batchAt + 1) & 63;
        }
      }, { minOps: 64 });
      if (slices === 10_000 && (slowest === undefined || single.nsPerOp > slowest.ns)) slowest = { strategy, ns: single.nsPerOp };
      rows.push({
        strategy,
        slices,
        'draw (ns)': fmt(draw.nsPerOp),
        'update, 1 result (ns)': fmt(single.nsPerOp),
        'update, per result in batches of 64 (ns)': fmt(batched.nsPerOp),
      });
    }
  }

  const treeRows: BenchRow[] = [];
  for (const slices of SIZES) {
    const weights = Array.from({ length: slices }, (_, i) => 1 + (i % 13));
    const tree = SumTree.from(weights);
    const rng = createRng(['bench-tree', slices]);
    const set = measure((n) => {
      for (let k = 0; k < n; k++) tree.set(k % slices, 1 + rng.next());
    });
    const find = measure((n) => {
      for (let k = 0; k < n; k++) tree.find(rng.next() * tree.total);
    });
    treeRows.push({ slices, 'weight update (ns)': fmt(set.nsPerOp), 'weighted pick (ns)': fmt(find.nsPerOp) });
  }

  return [
    {
      title: 'Curriculum: draw and update latency',
      description:
        'Median ns per `draw(rng)` and per `update(results)` on a curriculum warmed up by a synthetic agent ' +
        '(sigmoid skill curves, 8 levels), at 10 and 10,000 slices. Peer figures are from another run (see the notes), ' +
        'not this one.',
      rows,
      targets: slowest === undefined ? [] : [updateTarget(slowest)],
      notes: [
        'Targets: draw <= 2 µs and weight update <= 1 µs, flat up to 10,000 slices (perf-anchors.md §4).',
        'An update recomputes the weight of each slice that got results and re-sums its path in the sum tree; ' +
          '`learnability` also refreshes every slice when ln(N+1) has grown by 1% (amortised over the rows).',
        '`prioritized-replay` uses capacity 8 per slice here so that replay draws happen at 10,000 slices too.',
        `Peer, another run: reasoning-gym ${COMPOSITE_DATASET.workload}, ${PEER_RUNS.source}: ` +
          `≈ ${COMPOSITE_DATASET.drawMicros} µs per item (8.0k items/s, sampling plus generating the item) and ` +
          `${COMPOSITE_DATASET.weightUpdateMicros} µs per \`update_dataset_weight\` (sets one weight of 9). Not the same workload: ` +
          'our draw generates nothing, and our update folds a result into windows, level and weight rules; the like-for-like ' +
          'figure for `update_dataset_weight` is the sum tree\'s weight update below.',
      ],
    },
    {
      title: 'Curriculum: sum tree',
      description: 'The weighted sampler under every draw: set one weight (re-sums its path), pick one index.',
      rows: treeRows,
    },
  ];
}
