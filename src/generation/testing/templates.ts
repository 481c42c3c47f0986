/** Templates for generation tests, benches and the determinism must-show: good ones and planted bad ones. */
import { z } from 'zod';
import { defineTemplate } from '../../core/index.js';
import type { RegisteredTemplate } from '../../core/index.js';

const operands = z.strictObject({ a: z.number().int(), b: z.number().int() });

/** `testing/add@1`: a + b, operands up to 9, 99, 999 by level. */
export const addTemplate = defineTemplate({
  domain: 'testing',
  name: 'add',
  version: 1,
  taskType: 'arithmetic',
  description: 'Add two non-negative integers.',
  levels: [{ max: 9 }, { max: 99 }, { max: 999 }],
  params: operands,
  sample: (rng, _level, spec) => ({ a: rng.int(0, spec.max as number), b: rng.int(0, spec.max as number) }),
  build: (p) => ({
    instructions: `What is ${p.a} + ${p.b}?`,
    initialState: null,
    budget: { steps: 2 },
    acceptance: { finalState: false, answer: String(p.a + p.b) },
  }),
  solve: (p) => [{ type: 'finish', answer: String(p.a + p.b) }],
});

/** `testing/multiply@1`: a * b, a different task type. */
export const multiplyTemplate = defineTemplate({
  domain: 'testing',
  name: 'multiply',
  version: 1,
  taskType: 'multiplication',
  levels: [{ max: 9 }, { max: 99 }],
  params: operands,
  sample: (rng, _level, spec) => ({ a: rng.int(2, spec.max as number), b: rng.int(2, spec.max as number) }),
  build: (p) => ({
    instructions: `Multiply ${p.a} by ${p.b} and answer with the product.`,
    initialState: null,
    budget: { steps: 2 },
    acceptance: { finalState: false, answer: String(p.a * p.b) },
  }),
  solve: (p) => [{ type: 'finish', answer: String(p.a * p.b) }],
});

const STORY =
  'A courier leaves the northern depot at dawn with a van full of parcels for the harbour district. ' +
  'The road follows the river for a while, passes the old mill and the school, then climbs a long hill ' +
  'where the traffic usually slows down behind the buses. At the top the courier stops at a bakery, buys ' +
  'bread for the team, checks the list of deliveries and calls the dispatcher to confirm the route for ' +
  'the afternoon. The dispatcher says that two customers have moved their appointments and that one parcel ' +
  'must be returned to the sender because the address is incomplete. The courier, who is WORD and careful, ' +
  'rearranges the parcels in the van so that the returned one sits by the door, drives down to the harbour, ' +
  'delivers eleven parcels before noon, eats lunch on a bench by the ferry terminal and watches the boats ' +
  'leave for the islands. In the afternoon the remaining deliveries go smoothly except for a locked gate at ' +
  'the fish market, where a guard finally lets the van through after a phone call to the manager. ' +
  'How many parcels were delivered before noon?';

/** `testing/story@1`: a long text where only one adjective varies, so its tasks are near duplicates. */
export const storyTemplate = defineTemplate({
  domain: 'testing',
  name: 'story',
  version: 1,
  taskType: 'reading',
  levels: [{ word: ['quick', 'fast', 'swift', 'rapid', 'speedy', 'brisk'] }],
  params: z.strictObject({ word: z.string() }),
  sample: (rng, _level, spec) => ({ word: rng.pick(spec.word as string[]) }),
  build: (p) => ({
    instructions: STORY.replace('WORD', p.word),
    initialState: null,
    budget: { steps: 2 },
    acceptance: { finalState: false, answer: '11' },
  }),
  solve: () => [{ type: 'finish', answer: '11' }],
});

/** `testing/tiny@1`: only four distinct tasks, so a batch of it is mostly exact duplicates. */
export const tinyTemplate = defineTemplate({
  domain: 'testing',
  name: 'tiny',
  version: 1,
  taskType: 'arithmetic',
  levels: [{ max: 1 }],
  params: operands,
  sample: (rng, _level, spec) => ({ a: rng.int(0, spec.max as number), b: rng.int(0, spec.max as number) }),
  build: (p) => ({
    instructions: `Compute ${p.a} plus ${p.b}.`,
    initialState: null,
    budget: { steps: 2 },
    acceptance: { finalState: false, answer: String(p.a + p.b) },
  }),
  solve: (p) => [{ type: 'finish', answer: String(p.a + p.b) }],
});

/** `planted/empty-instructions@1`: every task has empty instructions (schema gate). */
export const emptyInstructionsTemplate = defineTemplate({
  domain: 'planted',
  name: 'empty-instructions',
  version: 1,
  taskType: 'arithmetic',
  levels: [{ max: 999 }],
  params: operands,
  sample: (rng, _level, spec) => ({ a: rng.int(0, spec.max as number), b: rng.int(0, spec.max as number) }),
  build: (p) => ({
    instructions: '   ',
    initialState: null,
    budget: { steps: 2 },
    acceptance: { finalState: false, answer: String(p.a + p.b) },
  }),
  solve: (p) => [{ type: 'finish', answer: String(p.a + p.b) }],
});

/** `planted/unsolvable@1`: the reference solution gives a wrong answer (oracle gate). */
export const unsolvableTemplate = defineTemplate({
  domain: 'planted',
  name: 'unsolvable',
  version: 1,
  taskType: 'arithmetic',
  levels: [{ max: 999 }],
  params: operands,
  sample: (rng, _level, spec) => ({ a: rng.int(0, spec.max as number), b: rng.int(0, spec.max as number) }),
  build: (p) => ({
    instructions: `Subtract ${p.b} from ${p.a}.`,
    initialState: null,
    budget: { steps: 2 },
    acceptance: { finalState: false, answer: String(p.a - p.b) },
  }),
  solve: (p) => [{ type: 'finish', answer: String(p.a + p.b + 1) }],
});

/** `planted/trivial@1`: the expected answer is empty, so doing nothing passes (non-triviality gate). */
export const trivialTemplate = defineTemplate({
  domain: 'planted',
  name: 'trivial',
  version: 1,
  taskType: 'arithmetic',
  levels: [{ max: 999 }],
  params: operands,
  sample: (rng, _level, spec) => ({ a: rng.int(0, spec.max as number), b: rng.int(0, spec.max as number) }),
  build: (p) => ({
    instructions: `Think about ${p.a} and ${p.b}, then say nothing.`,
    initialState: null,
    budget: { steps: 2 },
    acceptance: { finalState: false, answer: '' },
  }),
  solve: () => [{ type: 'finish', answer: '' }],
});

/** `planted/bad-params@1`: sample() returns params its schema rejects (instantiation fails). */
export const badParamsTemplate = defineTemplate({
  domain: 'planted',
  name: 'bad-params',
  version: 1,
  taskType: 'arithmetic',
  levels: [{ max: 9 }],
  params: operands,
  sample: (rng) => ({ a: rng.int(0, 9), b: 'seven' }) as unknown as { a: number; b: number },
  build: (p) => ({
    instructions: `What is ${p.a} + ${p.b}?`,
    initialState: null,
    budget: { steps: 2 },
    acceptance: { finalState: false, answer: '0' },
  }),
  solve: () => [{ type: 'finish', answer: '0' }],
});

/** Every template of this module (workers import it through `templateModules`). */
export const templates: RegisteredTemplate<any>[] = [
  addTemplate,
  multiplyTemplate,
  storyTemplate,
  tinyTemplate,
  emptyInstructionsTemplate,
  unsolvableTemplate,
  trivialTemplate,
  badParamsTemplate,
];
