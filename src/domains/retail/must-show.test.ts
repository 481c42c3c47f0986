import { describe, expect, it } from 'vitest';
import { createRng } from '../../core/index.js';
import type { Action, JsonValue, Observation, Rng, StepResult, Task } from '../../core/index.js';
import { instantiateTask } from '../../generation/index.js';
import { createEpisode, createRuntimeCache } from '../../runtime/index.js';
import { CATALOGUE } from './vocab.js';
import { goalOf, retail, retailTemplates, TASK_WORLD_SEEDS, type RetailGoal } from './index.js';
import { worldIndex } from './templates/worlds.js';

const cache = createRuntimeCache(retail);

/** 1,000 tasks over every template (training and held-out) and every level. */
function thousandTasks(): Task[] {
  const tasks: Task[] = [];
  for (let i = 0; i < 1000; i++) {
    const template = retailTemplates[i % retailTemplates.length]!;
    const level = 1 + (Math.floor(i / retailTemplates.length) % template.levels.length);
    tasks.push(instantiateTask(template, { level, seed: 1000 + i, index: 0 }));
  }
  return tasks;
}

function play(task: Task, actions: readonly Action[], seed = 0): StepResult | undefined {
  const episode = createEpisode(retail, task, { cache, faults: false });
  episode.reset({ seed });
  let last: StepResult | undefined;
  for (const action of actions) {
    if (episode.status !== 'running') break;
    last = episode.step(action);
  }
  if (episode.status === 'running') last = episode.step({ type: 'finish' });
  return last;
}

/** Ids, emails and words an agent has seen: what random arguments are drawn from. */
function tokens(observation: Observation, into: Set<string>): void {
  const add = (text: string): void => {
    for (const t of text.match(/#W\d{7}|[\w.]+@[\w.]+|[A-Za-z0-9_]+/g) ?? []) if (into.size < 400) into.add(t);
  };
  if (observation.text !== undefined) add(observation.text);
  if (observation.output !== undefined) add(JSON.stringify(observation.output));
}

/** A seeded random agent: random valid tool calls with seen arguments and random messages, then finish. */
function randomTrajectory(task: Task, rng: Rng): StepResult | undefined {
  const episode = createEpisode(retail, task, { cache, faults: false });
  const first = episode.reset({ seed: 0 });
  const seen = new Set<string>();
  tokens(first, seen);
  const tools = first.tools ?? [];
  const lines = ['Can you confirm?', 'Is there anything else I can help you with?', 'What is your email?', 'Which order?', 'Yes, I will do that. Please confirm?'];
  let last: StepResult | undefined;
  for (let i = 0; i < 12 && episode.status === 'running'; i++) {
    const words = [...seen];
    let action: Action;
    if (rng.chance(0.3)) {
      action = { type: 'message', text: rng.chance(0.5) ? rng.pick(lines) : rng.sample(words, 4).join(' ') };
    } else {
      const tool = rng.pick(tools);
      const props = (tool.parameters['properties'] ?? {}) as Record<string, { type?: string; enum?: JsonValue[] }>;
      const args: Record<string, JsonValue> = {};
      for (const name of Object.keys(props)) {
        const schema = props[name]!;
        if (Array.isArray(schema.enum)) args[name] = rng.pick(schema.enum);
        else if (schema.type === 'array') args[name] = rng.sample(words, rng.int(1, 2));
        else args[name] = rng.pick(words);
      }
      action = { type: 'tool', tool: tool.name, args };
    }
    last = episode.step(action);
    tokens(last.observation, seen);
  }
  if (episode.status === 'running') last = episode.step({ type: 'finish' });
  return last;
}

describe('retail must-show', () => {
  const tasks = thousandTasks();

  it('covers every template and level in the 1,000 tasks', () => {
    const slices = new Set(tasks.map((t) => `${t.template}#${t.level}`));
    expect(slices.size).toBe(retailTemplates.reduce((n, t) => n + t.levels.length, 0));
    expect(new Set(tasks.map((t) => t.id)).size).toBeGreaterThan(990);
  });

  it('the oracle (reference solution replayed through createEpisode) scores outcome 1 on all 1,000 tasks', () => {
    const failed: string[] = [];
    for (const task of tasks) {
      const last = play(task, task.spec.solution);
      if (last?.terminated !== true || last.info.outcome !== 1) failed.push(`${task.template} L${task.level}: ${JSON.stringify(last?.info.acceptance)}`);
    }
    expect(failed).toEqual([]);
  }, 120_000);

  it('the empty trajectory fails on >= 99% of them', () => {
    const passed = tasks.filter((task) => play(task, [])?.info.outcome === 1);
    expect(passed.length).toBeLessThanOrEqual(10);
  }, 60_000);

  it('a seeded random trajectory (random valid calls and messages, then finish) fails on >= 99% of them', () => {
    const passed = tasks.filter((task) => randomTrajectory(task, createRng([task.id, 'random-agent']))?.info.outcome === 1);
    expect(passed.map((t) => t.template)).toEqual([]);
    expect(passed.length).toBeLessThanOrEqual(10);
  }, 120_000);
});

/** Every question the user knows how to answer, then the reference solution. */
const QUESTIONS = [
  'Could you verify your identity? What is your email?',
  'What is your name and zip code?',
  'What is your zip code?',
  'Which order is it? Do you have the order id?',
  'Which items?',
  'What would you like instead?',
  'Which payment method?',
  'What is the reason?',
  'What is the new address?',
  'Is there anything else I can help you with?',
];

const PRODUCT_NAMES = CATALOGUE.map((p) => p.name).sort((a, b) => b.length - a.length);

/** Facts the user states that can be checked against the world; returns what contradicts it. */
function contradictions(task: Task, texts: readonly string[]): string[] {
  const goal = goalOf(task.spec.user) as RetailGoal;
  const index = worldIndex(TASK_WORLD_SEEDS.find((s) => (task.spec.initialState as { seed: number }).seed === s)!);
  const data = index.world.data;
  const user = data.users[goal.profile.user_id]!;
  const own = new Set(user.orders);
  const foreign = new Set(goal.intents.flatMap((i) => (i.kind === 'other_customer' ? [i.order_id] : [])));
  const zips = new Set([user.address.zip, ...goal.intents.flatMap((i) => ('address' in i ? [i.address.zip] : []))]);
  const ownProducts = new Set(user.orders.flatMap((o) => data.orders[o]!.items.map((i) => i.name)));
  const methods = Object.values(user.payment_methods);
  const problems: string[] = [];
  for (const text of texts) {
    for (const email of text.match(/[\w.]+@example\.com/g) ?? []) if (email !== user.email) problems.push(`email ${email}`);
    for (const id of text.match(/#W\d{7}/g) ?? []) {
      if (data.orders[id] === undefined) problems.push(`order ${id} does not exist`);
      else if (!own.has(id) && !foreign.has(id)) problems.push(`order ${id} is not the user's`);
      else if (foreign.has(id) && !/sister|partner|roommate|neighbour|father|friend/.test(text)) problems.push(`order ${id} claimed as own`);
    }
    for (const zip of text.match(/\b\d{5}\b/g) ?? []) if (!zips.has(zip)) problems.push(`zip ${zip}`);
    const name = /(?:name is|i'm|i am|under) ([A-Z][\w-]+) ([A-Z][\w-]+)/i.exec(text);
    if (name !== null && /^[A-Z]/.test(name[1]!) && `${name[1]} ${name[2]}` !== `${user.name.first_name} ${user.name.last_name}`) {
      problems.push(`name ${name[1]} ${name[2]}`);
    }
    let rest = text;
    for (const product of PRODUCT_NAMES) {
      if (!rest.includes(product)) continue;
      rest = rest.split(product).join('');
      if (!ownProducts.has(product)) problems.push(`product ${product} is in none of the user's orders`);
    }
    for (const m of text.matchAll(/(\w+) card ending in (\d{4})/g)) {
      const ok = m[1] === 'gift' ? methods.some((pm) => pm.source === 'gift_card' && pm.id.endsWith(m[2]!)) : methods.some((pm) => pm.source === 'credit_card' && pm.brand === m[1] && pm.last_four === m[2]);
      if (!ok) problems.push(`payment method ${m[0]}`);
    }
    if (/paypal/i.test(text) && !methods.some((pm) => pm.source === 'paypal')) problems.push('paypal');
    if (/my gift card\b(?! ending)/.test(text) && !methods.some((pm) => pm.source === 'gift_card')) problems.push('gift card');
  }
  if (goal.conditional !== undefined) {
    const said = texts.join(' ').toLowerCase();
    const order = data.orders[goal.conditional.order_id]!;
    if (order.status !== goal.conditional.status) problems.push('conditional status');
    if (/hasn't shipped|still waiting|it's still/.test(said) && order.status !== 'pending') problems.push('says pending');
    if (/already shipped|has shipped already|already left|already gone out|on its way/.test(said) && order.status === 'pending') problems.push('says shipped');
  }
  return problems;
}

describe('retail simulated user', () => {
  const sample: Task[] = [];
  for (const template of retailTemplates) {
    for (let level = 1; level <= template.levels.length; level++) for (const seed of [5, 6, 7]) sample.push(instantiateTask(template, { level, seed, index: 0 }));
  }

  it('never contradicts the database in what it states (questions from every angle, then the reference solution)', () => {
    const problems: string[] = [];
    for (const task of sample) {
      for (const seed of [0, 1]) {
        const episode = createEpisode(retail, task, { cache, faults: false });
        const texts = [episode.reset({ seed }).text ?? ''];
        for (const action of [...QUESTIONS.map((text): Action => ({ type: 'message', text })), ...task.spec.solution]) {
          if (episode.status !== 'running') break;
          const result = episode.step(action);
          if (action.type === 'message' && result.observation.text !== undefined) texts.push(result.observation.text);
        }
        for (const p of contradictions(task, texts)) problems.push(`${task.template} L${task.level}: ${p}`);
      }
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it('(the fact check itself catches invented facts)', () => {
    const task = sample[0]!;
    const invented = ['My email is nobody123@example.com.', 'It is order #W0000000.', 'My zip code is 00001.', "It's the order with the Drone, the Guitar, the Snowboard, the Projector and the Monitor in it."];
    expect(contradictions(task, invented).length).toBeGreaterThanOrEqual(4);
  });

  it('is deterministic: the same task, seed and messages give the same replies and flags', () => {
    for (const task of sample.filter((_, i) => i % 4 === 0)) {
      const run = (): unknown[] => {
        const episode = createEpisode(retail, task, { cache, faults: false });
        const out: unknown[] = [episode.reset({ seed: 3 }).text];
        for (const action of [...QUESTIONS.slice(0, 5).map((text): Action => ({ type: 'message', text })), ...task.spec.solution]) {
          if (episode.status !== 'running') break;
          const r = episode.step(action);
          out.push([r.observation.text, r.info.stateHash, r.terminated]);
        }
        return out;
      };
      expect(run()).toEqual(run());
    }
  });

  it('varies its phrasing across episode seeds (paraphrase variety) without changing the task', () => {
    const task = sample.find((t) => t.template === 'retail/compound@2' && t.level === 2)!;
    const openings = new Set<string>();
    for (let seed = 0; seed < 20; seed++) openings.add(createEpisode(retail, task, { cache }).reset({ seed }).text!);
    expect(openings.size).toBeGreaterThan(5);
  });
});
