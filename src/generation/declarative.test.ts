import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EnvHarnessError } from '../core/index.js';
import { compileDeclarativeTemplate, loadDeclarativeTemplates } from './declarative.js';
import { instantiateTask } from './instantiate.js';

function issues(text: string, format: 'yaml' | 'json' = 'yaml'): Array<{ pointer: string; message: string }> {
  try {
    loadDeclarativeTemplates(text, format);
  } catch (error) {
    expect(error).toBeInstanceOf(EnvHarnessError);
    expect((error as EnvHarnessError).code).toBe('IMPORT_INVALID');
    return (error as EnvHarnessError).details!.issues as Array<{ pointer: string; message: string }>;
  }
  throw new Error('expected IMPORT_INVALID');
}

const QA = `
templates:
  - kind: question_answer
    domain: arith
    name: sum
    version: 1
    taskType: addition
    levels:
      - { a: [0, 9], b: [0, 9] }
      - { a: [10, 99], b: { choices: [100, 200] } }
    instructions: "Add {a} and {b}."
    answer: "{a + b}"
`;

const TOOLS = {
  templates: [
    {
      kind: 'tool_calls',
      domain: 'retail',
      name: 'cancel-by-id',
      version: 1,
      taskType: 'cancel',
      levels: [{ order: { choices: ['#W1', '#W2'] }, qty: [1, 3] }],
      instructions: 'Cancel order {order}.',
      tools: ['get_order_details', 'cancel_pending_order'],
      budget: { steps: 6 },
      initialState: { orders: ['{order}'], fixed: { a: 1 } },
      solution: [
        { tool: 'get_order_details', args: { order_id: '{order}' } },
        { tool: 'cancel_pending_order', args: { order_id: '{order}', reason: 'no longer needed', items: '{qty}' } },
      ],
      outputs: ['{order} is cancelled'],
    },
  ],
};

describe('loadDeclarativeTemplates', () => {
  it('turns a question_answer definition into a template whose tasks answer the expression', () => {
    const [template] = loadDeclarativeTemplates(QA, 'yaml');
    expect(template!.id).toBe('arith/sum@1');
    for (let index = 0; index < 20; index++) {
      const task = instantiateTask(template!, { level: 2, seed: 3, index });
      const { a, b } = task.params as { a: number; b: number };
      expect(a).toBeGreaterThanOrEqual(10);
      expect([100, 200]).toContain(b);
      expect(task.spec.instructions).toBe(`Add ${a} and ${b}.`);
      expect(task.spec.acceptance).toEqual({ finalState: false, answer: String(a + b) });
      expect(task.spec.solution).toEqual([{ type: 'finish', answer: String(a + b) }]);
      expect(task.spec.budget).toEqual({ steps: 2 });
    }
  });

  it('turns a tool_calls definition into tool-call tasks graded by final state', () => {
    const [template] = loadDeclarativeTemplates(JSON.stringify(TOOLS), 'json');
    const task = instantiateTask(template!, { level: 1, seed: 1, index: 0 });
    const { order, qty } = task.params as { order: string; qty: number };
    expect(task.spec.acceptance).toEqual({ finalState: true, outputs: [`${order} is cancelled`] });
    expect(task.spec.constraints).toEqual({ allowedTools: ['get_order_details', 'cancel_pending_order'] });
    expect(task.spec.initialState).toEqual({ orders: [order], fixed: { a: 1 } });
    expect(task.spec.solution).toEqual([
      { type: 'tool', tool: 'get_order_details', args: { order_id: order } },
      { type: 'tool', tool: 'cancel_pending_order', args: { order_id: order, reason: 'no longer needed', items: qty } },
    ]);
  });

  it('loads the shipped example and every template instantiates at every level', () => {
    const templates = loadDeclarativeTemplates(readFileSync(new URL('../../examples/templates/arithmetic.yaml', import.meta.url), 'utf8'), 'yaml');
    expect(templates.map((t) => t.id)).toEqual(['arith/sum@1', 'arith/word-problem@1', 'arith/remainder@1', 'arith/extremes@1']);
    for (const template of templates) {
      for (let level = 1; level <= template.levels.length; level++) {
        const task = instantiateTask(template, { level, seed: 9, index: level });
        expect(task.spec.acceptance.answer).toMatch(/^-?\d+$/);
      }
    }
  });

  it('changes the source digest when the definition changes, and only then', () => {
    const [a] = loadDeclarativeTemplates(QA, 'yaml');
    const [b] = loadDeclarativeTemplates(QA.replace('# none', ''), 'yaml');
    const [c] = loadDeclarativeTemplates(QA.replace('Add {a}', 'Sum {a}'), 'yaml');
    expect(b!.sourceDigest).toBe(a!.sourceDigest);
    expect(c!.sourceDigest).not.toBe(a!.sourceDigest);
    expect(JSON.parse(a!.sourceText as string)).toMatchObject({ kind: 'question_answer', answer: '{a + b}' });
  });

  it('compiles a single definition object', () => {
    const template = compileDeclarativeTemplate(TOOLS.templates[0]);
    expect(template.id).toBe('retail/cancel-by-id@1');
    expect(() => compileDeclarativeTemplate({ ...TOOLS.templates[0], version: 0 })).toThrow(/at \/version/);
  });

  describe('reports each kind of invalid document with the pointer of the bad field', () => {
    it('syntax errors', () => {
      expect(issues('templates: [\n  {kind: ', 'yaml')[0]!.message).toMatch(/not valid YAML/);
      expect(issues('{"templates": [', 'json')[0]!.message).toMatch(/not valid JSON/);
    });

    it('a document without a templates list, and unknown top-level fields', () => {
      expect(issues('- a\n- b')[0]!.pointer).toBe('');
      expect(issues(QA + 'extra: 1\n')).toEqual([{ pointer: '/extra', message: 'unknown field "extra"; the document has only `templates`' }]);
    });

    it('an unknown kind', () => {
      expect(issues(QA.replace('question_answer', 'quiz'))).toEqual([
        { pointer: '/templates/0/kind', message: 'unknown kind "quiz"; use one of: question_answer, tool_calls' },
      ]);
    });

    it('a missing required field', () => {
      expect(issues(QA.replace('    answer: "{a + b}"\n', ''))).toEqual([
        { pointer: '/templates/0/answer', message: 'missing required field "answer" (string); add it' },
      ]);
    });

    it('a mistyped field and a bad name', () => {
      const found = issues(QA.replace('version: 1', 'version: "one"').replace('domain: arith', 'domain: Arith'));
      expect(found.map((i) => i.pointer)).toEqual(['/templates/0/domain', '/templates/0/version']);
      expect(found[0]!.message).toContain('lower-case');
    });

    it('an unknown field in a template', () => {
      expect(issues(QA.replace('    taskType: addition\n', '    taskType: addition\n    instruction: typo\n'))).toEqual([
        { pointer: '/templates/0/instruction', message: 'unknown field "instruction"; remove it or check its spelling' },
      ]);
    });

    it('bad parameter declarations', () => {
      expect(issues(QA.replace('a: [0, 9]', 'a: [9, 0]'))[0]).toEqual({
        pointer: '/templates/0/levels/0/a',
        message: 'range [9, 0] has min greater than max; write [0, 9]',
      });
      expect(issues(QA.replace('a: [0, 9]', 'a: [1, 2, 3]'))[0]!.message).toContain('{choices: [1,2,3]}');
      expect(issues(QA.replace('b: { choices: [100, 200] }', 'b: { choices: [] }'))[0]!.pointer).toBe('/templates/0/levels/1/b/choices');
      expect(issues(QA.replace('b: { choices: [100, 200] }', 'b: { choices: [1, x] }'))[0]!.pointer).toBe('/templates/0/levels/1/b/choices/1');
    });

    it('levels that declare different parameters or types', () => {
      expect(issues(QA.replace('{ a: [10, 99], b:', '{ c: [10, 99], b:'))[0]).toMatchObject({ pointer: '/templates/0/levels/1' });
      expect(issues(QA.replace('b: { choices: [100, 200] }', 'b: { choices: [x, y] }'))[0]).toMatchObject({
        pointer: '/templates/0/levels/1/b',
        message: expect.stringContaining('keep one type per parameter'),
      });
    });

    it('placeholders that name unknown parameters or misuse types', () => {
      expect(issues(QA.replace('"{a + b}"', '"{a + c}"'))).toEqual([
        { pointer: '/templates/0/answer', message: 'in {a + c}: unknown parameter "c"; declared parameters: a, b (at character 6)' },
      ]);
      const tools = structuredClone(TOOLS);
      tools.templates[0]!.solution[0]!.args = { order_id: '{order * 2}' };
      expect(issues(JSON.stringify(tools), 'json')[0]).toMatchObject({
        pointer: '/templates/0/solution/0/args/order_id',
        message: expect.stringContaining('a string parameter cannot be used in arithmetic'),
      });
    });

    it('a solution tool that is not allowed', () => {
      const tools = structuredClone(TOOLS);
      tools.templates[0]!.solution[1]!.tool = 'refund_order';
      expect(issues(JSON.stringify(tools), 'json')).toEqual([
        { pointer: '/templates/0/solution/1/tool', message: 'tool "refund_order" is not in `tools`; add it there or fix the name' },
      ]);
    });

    it('the same id twice', () => {
      const doc = { templates: [TOOLS.templates[0], TOOLS.templates[0]] };
      expect(issues(JSON.stringify(doc), 'json')[0]).toMatchObject({ pointer: '/templates/1/version', message: expect.stringContaining('declared twice') });
    });

    it('collects every problem, and the error message names the first', () => {
      try {
        loadDeclarativeTemplates(QA.replace('"{a + b}"', '"{a + c}"').replace('version: 1', 'version: 0'), 'yaml');
        expect.unreachable();
      } catch (error) {
        expect((error as EnvHarnessError).message).toBe(
          'invalid template document at /templates/0/version: Too small: expected number to be >=1',
        );
        expect((error as EnvHarnessError).details?.pointer).toBe('/templates/0/version');
      }
    });
  });
});
