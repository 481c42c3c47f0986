/**
 * Test support: a seeded agent for the built-in `math` domain whose skill grows with training, and a
 * helper that makes a real training run with it. Used by the report, doctor and export tests.
 */
import { createRng, type Agent, type Observation } from '../../core/index.js';

export interface MathAgentOptions {
  seed?: number;
  /** Skill per task type before training (compared with a task's difficulty; default 1.5). */
  start?: Record<string, number>;
  /** Skill gained per training episode of any kind (default 1/120). */
  rate?: Record<string, number>;
  /** Skill never grows beyond this (default 4.5). */
  cap?: number;
  /** Forgetting: between these trained-episode counts, skill drops by `by` (to make the regression guard fire). */
  dip?: { from: number; to: number; by: number };
}

/** What the agent reads off the instructions: the right answer, the task type and a difficulty. */
export function readMathTask(text: string): { answer: string; type: string; difficulty: number } | undefined {
  const sum = /^What is (.+)\? Answer/.exec(text);
  if (sum) {
    const tokens = sum[1]!.split(' ');
    let total = Number(tokens[0]);
    let digits = tokens[0]!.replace('-', '').length;
    for (let i = 1; i + 1 < tokens.length; i += 2) {
      const value = Number(tokens[i + 1]);
      digits = Math.max(digits, tokens[i + 1]!.length);
      total += tokens[i] === '-' ? -value : value;
    }
    const terms = (tokens.length + 1) / 2;
    return { answer: String(total), type: 'arithmetic', difficulty: terms + digits - 2 };
  }
  const count = /^How many times does the letter "(.)" appear in "(.+)"\?/.exec(text);
  if (count) {
    const [, letter, words] = count;
    return { answer: String([...words!].filter((c) => c === letter).length), type: 'counting', difficulty: words!.split(' ').length };
  }
  return undefined;
}

/**
 * An agent that answers correctly with probability sigmoid(2 · (skill − difficulty)). The draw depends
 * only on (seed, episode seed, task text), so a fixed-seed evaluation only changes when skill does.
 */
export function createMathAgent(options: MathAgentOptions = {}): Agent & { readonly trained: number } {
  const seed = options.seed ?? 1;
  const start = options.start ?? {};
  const rate = options.rate ?? {};
  const cap = options.cap ?? 4.5;
  let trained = 0;
  let training = true;
  const dip = options.dip;
  const skill = (type: string) => {
    const lost = dip && trained >= dip.from && trained < dip.to ? dip.by : 0;
    return Math.min(cap, (start[type] ?? 1.5) + trained * (rate[type] ?? 1 / 120)) - lost;
  };
  return {
    name: 'test-math',
    version: '1',
    get trained() {
      return trained;
    },
    config: () => ({ seed, start, rate, cap, dip: dip ?? null }),
    setTraining(on: boolean) {
      training = on;
    },
    begin(ctx) {
      let question = '';
      let step = 0;
      return {
        act(observation: Observation) {
          if (observation.kind === 'reset') question = observation.text ?? '';
          step++;
          const task = readMathTask(question);
          if (task === undefined) return { type: 'finish', answer: '0' };
          const p = 1 / (1 + Math.exp(-2 * (skill(task.type) - task.difficulty)));
          // An unsure agent first reaches for a tool the math domain does not have (INVALID_ACTION feedback).
          if (step === 1 && p < 0.6) return { type: 'tool', tool: 'calculator', args: { expression: question } };
          const correct = createRng([seed, ctx.seed, question]).next() < p;
          return { type: 'finish', answer: correct ? task.answer : String(Number(task.answer) + 1) };
        },
        end() {
          if (training) trained++;
        },
      };
    },
  };
}
