import { describe, expect, it } from 'vitest';
import { createRng } from '../core/index.js';
import type { Action, Domain, JsonValue, Observation, Rng, StepResult, Task, ToolSpec } from '../core/index.js';
import { retail, retailTemplates } from '../domains/retail/index.js';
import { instantiateTask } from '../generation/index.js';
import { createEpisode } from './episode.js';
import { createNonTrivialGate, playRandomTrajectory } from './gates.js';
import { createRuntimeCache } from './runtime-cache.js';
import { clearanceTemplate, createInventoryDomain, instantiate, makeInventoryTask, restockTemplate } from './testing/index.js';

// The gate's first algorithm, kept verbatim as the reference: it copied and sorted the whole word set
// on every step and derived its rng with core's createRng. The gate now keeps the words sorted as they
// arrive; the trajectory (and so the verdict) must not change.
function referenceTrajectory(domain: Domain<any>, task: Task, cache: ReturnType<typeof createRuntimeCache>): { actions: Action[]; last: StepResult | undefined } {
  const rng = createRng([task.id, 'non_trivial']);
  const episode = createEpisode(domain, task, { faults: false, cache });
  const first = episode.reset({ seed: 0 });
  const tools = first.tools ?? [];
  const words = new Set<string>();
  collectWords(first.text ?? '', words);
  const steps = Math.max(0, Math.min(8, (first.budget?.steps ?? 30) - 1));
  const actions: Action[] = [];
  let last: StepResult | undefined;
  for (let i = 0; i < steps && episode.status === 'running'; i++) {
    const action: Action =
      tools.length === 0 || rng.chance(0.25)
        ? { type: 'message', text: [...words].length > 0 ? rng.sample([...words].sort(), 3).join(' ') : 'ok' }
        : randomCall(rng.pick(tools), [...words].sort(), rng);
    actions.push(action);
    last = episode.step(action);
    collectObservation(last.observation, words);
  }
  if (episode.status === 'running') last = episode.step({ type: 'finish' });
  return { actions, last };
}

function randomCall(tool: ToolSpec, words: readonly string[], rng: Rng): Action {
  const props = (tool.parameters['properties'] ?? {}) as Record<string, { type?: string; enum?: JsonValue[] }>;
  const args: Record<string, JsonValue> = {};
  for (const name of Object.keys(props).sort()) {
    const schema = props[name]!;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) args[name] = rng.pick(schema.enum);
    else if (schema.type === 'string') args[name] = words.length > 0 ? rng.pick(words) : 'x';
    else if (schema.type === 'integer' || schema.type === 'number') {
      const numbers = words.filter((w) => /^[0-9]+$/.test(w));
      args[name] = numbers.length > 0 && rng.chance(0.5) ? Number(rng.pick(numbers)) : rng.int(1, 10);
    } else if (schema.type === 'boolean') args[name] = rng.chance(0.5);
  }
  return { type: 'tool', tool: tool.name, args };
}

function collectObservation(observation: Observation, words: Set<string>): void {
  if (observation.text !== undefined) collectWords(observation.text, words);
  if (observation.output !== undefined) collectWords(JSON.stringify(observation.output), words);
}

function collectWords(text: string, words: Set<string>): void {
  for (const w of text.match(/[A-Za-z0-9][A-Za-z0-9_@.-]*[A-Za-z0-9]|[0-9]+/g) ?? []) if (words.size < 500) words.add(w);
}

function expectSameTrajectory(domain: Domain<any>, task: Task, cache: ReturnType<typeof createRuntimeCache>): void {
  const played: Action[] = [];
  const last = playRandomTrajectory(domain, task, { cache }, played);
  const reference = referenceTrajectory(domain, task, cache);
  expect(played).toEqual(reference.actions);
  expect(last?.info).toEqual(reference.last?.info);
}

describe('the non-triviality gate\'s random trajectory', () => {
  it('plays exactly the reference algorithm\'s actions on retail tasks of every template and level', () => {
    const cache = createRuntimeCache(retail);
    let played = 0;
    for (const template of retailTemplates) {
      for (let level = 1; level <= template.levels.length; level++) {
        for (let seed = 0; seed < 6; seed++) {
          const task = instantiateTask(template, { level, seed, index: seed });
          expectSameTrajectory(retail, task, cache);
          played++;
        }
      }
    }
    expect(played).toBe(retailTemplates.length * 5 * 6);
  }, 120_000);

  it('plays exactly the reference algorithm\'s actions on inventory tasks, planted trivial ones included', () => {
    const inventory = createInventoryDomain();
    const cache = createRuntimeCache(inventory);
    for (const template of [restockTemplate, clearanceTemplate] as const) {
      for (let level = 1; level <= template.levels.length; level++) {
        for (let seed = 0; seed < 10; seed++) expectSameTrajectory(inventory, instantiate(template as typeof restockTemplate, level, seed), cache);
      }
    }
    // Solved by saying a word of the user's opening: the random trajectory finds it, in both versions.
    const answer = makeInventoryTask({ acceptance: { finalState: false, outputs: ['widget-1'] }, solution: [{ type: 'message', text: 'widget-1' }, { type: 'finish' }] });
    expectSameTrajectory(inventory, answer, cache);
    expect(referenceTrajectory(inventory, answer, cache).last?.info.outcome).toBe(1);
    expect(createNonTrivialGate(inventory, { cache })(answer)).toMatchObject({ ok: false, reason: 'a seeded random trajectory succeeds' });
  });
});
