/** Test support: a real harness on a SQLite file with the math domain, a generated pool and a training run. */
import { join } from 'node:path';
import type { Agent, RegisteredTemplate } from '../../core/index.js';
import type { StrategyName } from '../../curriculum/index.js';
import { math } from '../../domains/math/index.js';
import { createHarness, type Harness } from '../../harness/harness.js';
import type { TrainSummary } from '../../harness/train.js';
import { createMathAgent, type MathAgentOptions } from './math-agent.js';

export interface MathRunOptions {
  /** Store file name inside `dir` (default `math.db`); an existing file is reused. */
  file?: string;
  strategy?: StrategyName;
  episodes?: number;
  evalEvery?: number;
  seed?: number;
  agent?: Agent | MathAgentOptions;
  label?: string;
  /** Generate the pool (default true; false when training again on the same store). */
  generate?: boolean;
  /** Extra templates to register (a different environment version). */
  templates?: RegisteredTemplate<any>[];
  /** Day of January 2026 the ticking clock starts on (give a second harness on one store a later day). */
  clockDay?: number;
}

/** A clock that ticks one second per call from January `day`, 2026: records get stable, distinct timestamps. */
export function tickingClock(day = 1): () => string {
  let tick = 0;
  const two = (n: number) => String(n).padStart(2, '0');
  return () => {
    const t = tick++;
    return `2026-01-${two(day + Math.floor(t / 86400))}T${two(Math.floor(t / 3600) % 24)}:${two(Math.floor(t / 60) % 60)}:${two(t % 60)}.000Z`;
  };
}

/** Opens (or reuses) a math harness in `dir`, fills its pool and trains one run. */
export async function makeMathRun(dir: string, options: MathRunOptions = {}): Promise<{ harness: Harness; summary: TrainSummary }> {
  const harness = await createHarness({ store: join(dir, options.file ?? 'math.db'), domains: [math], templates: options.templates ?? [], clock: tickingClock(options.clockDay) });
  await harness.initialize({ seed: 7 });
  if (options.generate !== false) {
    const templates = [{ id: 'math/chain-sum@1' }, { id: 'math/count-letters@1' }];
    await harness.generate({ templates, levels: [1, 2, 3, 4], count: 60, seed: 11, split: 'regression' });
    await harness.generate({ templates: [{ id: 'math/chain-sum@1' }], levels: [1, 2, 3, 4, 5], count: 300, seed: 12, split: 'dynamic' });
    await harness.generate({ templates: [{ id: 'math/count-letters@1' }], levels: [1, 2, 3, 4], count: 200, seed: 13, split: 'dynamic' });
  }
  const agent = options.agent && 'begin' in options.agent ? options.agent : createMathAgent(options.agent as MathAgentOptions | undefined);
  const summary = await harness.train({
    agent,
    episodes: options.episodes ?? 400,
    strategy: options.strategy ?? 'threshold',
    evalEvery: options.evalEvery ?? 50,
    seed: options.seed ?? 3,
    ...(options.label ? { label: options.label } : {}),
  });
  return { harness, summary };
}
