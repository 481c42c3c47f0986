/**
 * Issue 14 §6: hostile template files give IMPORT_INVALID naming the problem, never INTERNAL (a crash):
 * an alias bomb, a document nested far deeper than the limit, an expression nested 200k deep, an
 * oversized document (limits in docs/errors.md, "Input limits").
 */
import { describe, expect, it } from 'vitest';
import { isEnvHarnessError } from '../../src/core/index.js';
import { TEMPLATE_DOCUMENT_LIMITS } from '../../src/generation/declarative.js';
import { compileText, MAX_EXPRESSION_DEPTH } from '../../src/generation/expression.js';
import { loadDeclarativeTemplates } from '../../src/index.js';

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isEnvHarnessError(error, 'IMPORT_INVALID'), String(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected IMPORT_INVALID');
}

describe('bad template files', () => {
  it('a billion-laughs YAML is IMPORT_INVALID', () => {
    const rows = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (const [n, p] of [['b', 'a'], ['c', 'b'], ['d', 'c'], ['e', 'd'], ['f', 'e'], ['g', 'f']]) rows.push(`${n}: &${n} [${Array(9).fill(`*${p}`).join(',')}]`);
    expect(refusal(() => loadDeclarativeTemplates(`${rows.join('\n')}\n`, 'yaml'))).toMatch(/aliases/);
  });

  it('a document nested 100k deep is IMPORT_INVALID (JSON and YAML)', () => {
    expect(refusal(() => loadDeclarativeTemplates(`{"templates":${'['.repeat(100_000)}${']'.repeat(100_000)}}`, 'json'))).toMatch(/nested deeper/);
    expect(refusal(() => loadDeclarativeTemplates(`templates: ${'['.repeat(5_000)}${']'.repeat(5_000)}\n`, 'yaml'))).toMatch(/nested deeper|YAML/);
  });

  it('a document over the size limit is IMPORT_INVALID', () => {
    expect(refusal(() => loadDeclarativeTemplates(`templates: []\n#${'x'.repeat(TEMPLATE_DOCUMENT_LIMITS.maxBytes)}`, 'yaml'))).toMatch(/larger than/);
  });

  it('an expression nested 200k deep is a problem report, not a stack overflow', () => {
    const deep = `{${'('.repeat(200_000)}a${')'.repeat(200_000)}}`;
    const result = compileText(deep, { a: 'integer' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problem.message).toMatch(new RegExp(`deeper than ${MAX_EXPRESSION_DEPTH}`));
    // Within the limit it still compiles.
    expect(compileText(`{${'('.repeat(10)}a${')'.repeat(10)}}`, { a: 'integer' }).ok).toBe(true);
  });
});

describe('a templates file with 100k levels', () => {
  it('is refused at once with IMPORT_INVALID instead of parsing for a minute', () => {
    const levels = Array.from({ length: 100_000 }, (_, i) => `      - { a: [0, ${i + 1}], b: [0, 9] }`).join('\n');
    const text = `templates:\n  - kind: question_answer\n    domain: arith\n    name: sum\n    version: 1\n    taskType: addition\n    description: x\n    levels:\n${levels}\n    instructions: "Add {a} and {b}."\n    answer: "{a + b}"\n`;
    // The line-count message proves the refusal came before the (slow) YAML parser ran.
    expect(refusal(() => loadDeclarativeTemplates(text, 'yaml'))).toMatch(/more than 10000 lines|larger than/);
  });

  it('more levels than the limit in a small JSON document is IMPORT_INVALID', () => {
    const levels = Array.from({ length: TEMPLATE_DOCUMENT_LIMITS.maxLevels + 1 }, () => ({ a: [0, 9] }));
    const doc = { templates: [{ kind: 'question_answer', domain: 'arith', name: 'sum', version: 1, taskType: 'addition', description: 'x', levels, instructions: 'Add {a}.', answer: '{a}' }] };
    expect(refusal(() => loadDeclarativeTemplates(JSON.stringify(doc), 'json'))).toMatch(/at most 1000 levels/);
  });
});
