import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTemplate, EnvHarnessError } from '../core/index.js';
import type { RegisteredTemplate } from '../core/index.js';
import { createTemplateRegistry } from './registry.js';

function template(domain: string, name: string, version: number, answer = '1'): RegisteredTemplate<{ n: number }> {
  return defineTemplate({
    domain,
    name,
    version,
    taskType: 'qa',
    // The answer is in the levels so that it shows in the source digest (closures do not).
    levels: [{ answer }],
    params: z.object({ n: z.number() }),
    sample: () => ({ n: 1 }),
    build: () => ({ instructions: 'q', initialState: null, budget: {}, acceptance: { finalState: false, answer } }),
    solve: () => [{ type: 'finish', answer }],
  });
}

function thrown(fn: () => unknown): EnvHarnessError {
  try {
    fn();
  } catch (error) {
    if (error instanceof EnvHarnessError) return error;
    throw error;
  }
  throw new Error('expected an EnvHarnessError');
}

describe('createTemplateRegistry', () => {
  const registry = createTemplateRegistry([template('retail', 'refund', 2), template('retail', 'refund', 1), template('retail', 'cancel', 1), template('math', 'add', 1)]);

  it('gets a template by full id and the latest version by name', () => {
    expect(registry.get('retail/refund@1').version).toBe(1);
    expect(registry.get('retail/refund').version).toBe(2);
    expect(registry.has('retail/refund@2')).toBe(true);
    expect(registry.has('retail/refund@3')).toBe(false);
  });

  it('lists templates sorted by id', () => {
    expect(registry.list().map((t) => t.id)).toEqual(['math/add@1', 'retail/cancel@1', 'retail/refund@1', 'retail/refund@2']);
  });

  it('orders versions numerically and takes the highest as latest', () => {
    const many = createTemplateRegistry([template('math', 'mul', 10), template('math', 'mul', 2), template('math', 'mul', 9)]);
    expect(many.list().map((t) => t.version)).toEqual([2, 9, 10]);
    expect(many.get('math/mul').version).toBe(10);
  });

  it('refuses the same id@version twice with REGISTRATION_CONFLICT', () => {
    const error = thrown(() => registry.register(template('retail', 'refund', 1, 'changed')));
    expect(error.code).toBe('REGISTRATION_CONFLICT');
    expect(error.message).toContain('retail/refund@1');
    expect(error.message).toContain('bump the version');
  });

  it('names the known versions for an unknown version', () => {
    const error = thrown(() => registry.get('retail/refund@3'));
    expect(error.code).toBe('VERSION_NOT_FOUND');
    expect(error.message).toBe('no template retail/refund@3; known versions: 1, 2');
    expect(error.details).toMatchObject({ known: [1, 2] });
  });

  it('names the templates of the domain for an unknown name', () => {
    const error = thrown(() => registry.get('retail/exchange@1'));
    expect(error.code).toBe('TEMPLATE_NOT_FOUND');
    expect(error.message).toContain('known templates of retail: retail/cancel, retail/refund');
  });

  it('names the known domains for an unknown domain', () => {
    const error = thrown(() => registry.get('web/login'));
    expect(error.code).toBe('TEMPLATE_NOT_FOUND');
    expect(error.message).toContain('known domains: math, retail');
  });

  it('rejects a malformed id with PARAMS_INVALID', () => {
    expect(thrown(() => registry.get('Retail refund')).code).toBe('PARAMS_INVALID');
  });

  it('rejects a template whose id does not match its declaration', () => {
    const forged = { ...template('math', 'sub', 1), id: 'math/sub@2' };
    expect(thrown(() => createTemplateRegistry([forged])).code).toBe('PARAMS_INVALID');
  });
});
