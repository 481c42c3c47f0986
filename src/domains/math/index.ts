/** The `math` domain: stateless question/answer templates, fast and simple (the generation baseline). */
import { z } from 'zod';
import { defineDomain, defineTemplate, type Domain, type RegisteredTemplate } from '../../core/index.js';

const chainSumParams = z.object({ terms: z.array(z.number().int()).min(2) });

/** Add a chain of integers: levels add terms and digits (reasoning-gym's chain_sum, our own code). */
export const chainSum = defineTemplate({
  domain: 'math',
  name: 'chain-sum',
  version: 1,
  taskType: 'arithmetic',
  description: 'Sum a chain of signed integers; higher levels have more terms and more digits.',
  levels: [
    { terms: 2, digits: 1 },
    { terms: 3, digits: 1 },
    { terms: 3, digits: 2 },
    { terms: 4, digits: 2 },
    { terms: 5, digits: 3 },
  ],
  params: chainSumParams,
  sample(rng, _level, spec) {
    const max = 10 ** (spec.digits as number) - 1;
    const terms: number[] = [];
    for (let i = 0; i < (spec.terms as number); i++) terms.push(rng.int(-max, max));
    return { terms };
  },
  build({ terms }) {
    const expression = terms.map((t, i) => (i === 0 ? String(t) : t < 0 ? `- ${-t}` : `+ ${t}`)).join(' ');
    return {
      instructions: `What is ${expression}? Answer with the number only.`,
      initialState: null,
      budget: { steps: 3 },
      acceptance: { finalState: false, answer: String(terms.reduce((a, b) => a + b, 0)) },
      tags: ['qa'],
    };
  },
  solve({ terms }) {
    return [{ type: 'finish', answer: String(terms.reduce((a, b) => a + b, 0)) }];
  },
});

const countParams = z.object({ word: z.string().min(1), letter: z.string().length(1) });
const WORDS = ['environment', 'curriculum', 'regression', 'distribution', 'feedback', 'constraint', 'difficulty', 'transition', 'snapshot', 'reproducible', 'assessment', 'successfully'];

/** Count a letter in a word: levels move from short to long words and rarer letters. */
export const countLetters = defineTemplate({
  domain: 'math',
  name: 'count-letters',
  version: 1,
  taskType: 'counting',
  description: 'Count how often a letter occurs in a word (or words); higher levels use more words.',
  levels: [{ words: 1 }, { words: 2 }, { words: 3 }, { words: 4 }],
  params: countParams,
  sample(rng, _level, spec) {
    const word = rng.sample(WORDS, spec.words as number).join(' ');
    const letters = [...new Set(word.replace(/ /g, ''))].sort();
    return { word, letter: rng.pick(letters) };
  },
  build({ word, letter }) {
    const count = [...word].filter((c) => c === letter).length;
    return {
      instructions: `How many times does the letter "${letter}" appear in "${word}"? Answer with the number only.`,
      initialState: null,
      budget: { steps: 3 },
      acceptance: { finalState: false, answer: String(count) },
      tags: ['qa'],
    };
  },
  solve({ word, letter }) {
    return [{ type: 'finish', answer: String([...word].filter((c) => c === letter).length) }];
  },
});

export const mathTemplates: RegisteredTemplate<any>[] = [chainSum, countLetters];

/**
 * A stateless domain: no tools, graded on the `finish` answer. Templates of a domain that has no
 * Domain object (e.g. declarative question/answer families) run in one of these.
 */
export function createStatelessDomain(name: string, templates: readonly RegisteredTemplate<any>[] = []): Domain<null> {
  return defineDomain<null>({
    name,
    version: 1,
    description: `stateless question/answer domain ${name}`,
    createState: () => null,
    fork: () => null,
    hashState: () => 'stateless',
    exportState: () => null,
    tools: [],
    templates,
  });
}

/** The built-in math domain with its templates. */
export const math: Domain<null> = createStatelessDomain('math', mathTemplates);
export const templates = mathTemplates;
