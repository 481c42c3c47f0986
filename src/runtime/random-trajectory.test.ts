import { describe, expect, it } from 'vitest';
import { createRng } from '../core/index.js';
import type { Action, Domain, JsonValue, Observation, Rng, StepResult, Task, ToolSpec } from '../core/index.js';
import { retail, retailTemplates } from '../domains/retail/index.js';
import { instantiateTask } from '../generation/index.js';
import { createEpisode } from './episode.js';
import { createNonTrivialGate, playRandomTrajectory, WordList } from './gates.js';
import fc from 'fast-check';
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

describe('the random trajectory\'s word list', () => {
  const WORD = /[A-Za-z0-9][A-Za-z0-9_@.-]*[A-Za-z0-9]|[0-9]+/g;
  const reference = (texts: readonly string[]): string[] => {
    const words = new Set<string>();
    for (const text of texts) collectWords(text, words);
    return [...words].sort();
  };
  const piece = fc.oneof(
    fc.string({ unit: fc.constantFrom('a', 'Z', '0', '7', '_', '@', '.', '-', ' ', '#', 'é', '"', ':') , maxLength: 24 }),
    fc.constantFrom('#W1234567', 'a.b.', '-1-', '9', 'x', 'a_', '1_2', '.5.', 'mail@x.org.', 'é1é', '42'),
  );
  const text = fc.array(piece, { maxLength: 12 }).map((parts) => parts.join(' '));

  it('adds the words of the first (regex) algorithm from any text, up to the first 500', () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 6 }), (texts) => {
        const list = new WordList();
        for (const t of texts) list.addText(t);
        expect(list.sorted).toEqual(reference(texts));
        expect(list.numbers).toEqual(reference(texts).filter((w) => /^[0-9]+$/.test(w)));
      }),
      { numRuns: 2_000 },
    );
    const many = Array.from({ length: 700 }, (_, i) => `w${(i * 7919) % 1000}`).join(' ');
    const list = new WordList();
    list.addText(many);
    expect(list.sorted).toEqual(reference([many]));
    expect(list.sorted).toHaveLength(500);
    expect([...many.matchAll(WORD)].length).toBe(700);
  });

  it('adds the words of JSON.stringify(output) for outputs long and short, fresh and repeated', () => {
    const output = fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.boolean()).map(([v, long]) => ({ list: v, names: ['alpha-1', 'beta_2', 'gamma.3', '#W0000001'], pad: long ? 'lorem ipsum 12 '.repeat(25) : '' }));
    fc.assert(
      fc.property(fc.array(fc.oneof(output, text), { maxLength: 5 }), (items) => {
        const list = new WordList();
        // Each output twice: the second time its words come from the memo.
        for (const item of [...items, ...items]) typeof item === 'string' ? list.addText(item) : list.addOutput(item as JsonValue);
        expect(list.sorted).toEqual(reference([...items, ...items].map((i) => (typeof i === 'string' ? i : JSON.stringify(i)))));
      }),
      { numRuns: 500 },
    );
  });
});
