// Each check of the strengthened describeDomain, shown to catch a mistake planted in a copy of the library domain.
import { describe, expect, it } from 'vitest';
import { defineTemplate } from '../../core/index.js';
import type { Domain, RegisteredTemplate, SimulatedUser, Tool } from '../../core/index.js';
import { checkDeterminism, checkFailingCallsChangeNothing, checkLevelsDiffer } from '../../../test/conformance/domain.js';
import { borrowTemplate, createLibraryDeskAgent, createLibraryDomain, returnTemplate } from './index.js';
import type { LibraryState } from './world.js';

const withTool = (name: string, wrap: (tool: Tool<LibraryState, any>) => Tool<LibraryState, any>): Domain<LibraryState> => {
  const domain = createLibraryDomain();
  return { ...domain, tools: domain.tools.map((t) => (t.name === name ? wrap(t) : t)) };
};
const withTemplates = (templates: RegisteredTemplate<any>[]): Domain<LibraryState> => ({ ...createLibraryDomain(), templates });
const options = { baselines: [createLibraryDeskAgent()], levelSamples: 16 };

describe('describeDomain catches planted mistakes (library copies)', () => {
  it('passes the unmodified library', () => {
    const library = createLibraryDomain();
    expect(checkFailingCallsChangeNothing(library)).toEqual([]);
    expect(checkLevelsDiffer(library, options)).toEqual([]);
    expect(checkDeterminism(library)).toEqual([]);
  });

  it('a tool that changes the state and then returns ok: false', () => {
    // The loan is written, then the call "fails" for titles of even length: a half-done write.
    const broken = withTool('checkout_book', (tool) => ({
      ...tool,
      run(state, args, ctx) {
        const outcome = tool.run(state, args, ctx);
        if (outcome.ok && String((outcome.output as { title: string }).title).length % 2 === 0) return { ok: false, error: { code: 'PRECONDITION_FAILED', message: 'try again later' } };
        return outcome;
      },
    }));
    const problems = checkFailingCallsChangeNothing(broken);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]).toMatch(/checkout_book\(.*\) failed \(PRECONDITION_FAILED\) but changed the state/);
  });

  it('levels that are not really different: every level builds the level-1 world', () => {
    const flat = defineTemplate({ ...borrowTemplate, sample: (rng, _level) => borrowTemplate.sample(rng, 1, borrowTemplate.levels[0]!) });
    const problems = checkLevelsDiffer(withTemplates([flat, returnTemplate]), options);
    expect(problems).toEqual([
      'library/borrow@1: level 2 is not different from level 1 (same distribution of params and reference length, same baseline success)',
      'library/borrow@1: level 3 is not different from level 2 (same distribution of params and reference length, same baseline success)',
      'library/borrow@1: level 4 is not different from level 3 (same distribution of params and reference length, same baseline success)',
    ]);
  });

  it('levels that get easier: a baseline succeeds more at a higher level', () => {
    const reversed = defineTemplate({ ...borrowTemplate, levels: [...borrowTemplate.levels].reverse() });
    // More tasks per level than the default 16, so that a rise of a fifth is beyond chance.
    const problems = checkLevelsDiffer(withTemplates([reversed, returnTemplate]), { ...options, levelSamples: 48 });
    expect(problems).toContainEqual(expect.stringMatching(/^library\/borrow@1: baseline library-desk succeeds more at level 2 \(\d+%\) than at level 1/));
    expect(problems.every((p) => p.startsWith('library/borrow@1: baseline library-desk succeeds more'))).toBe(true);
  });

  it('non-determinism in a tool: output depends on how often it was called', () => {
    let served = 0;
    const leaky = withTool('search_books', (tool) => ({
      ...tool,
      run(state, args, ctx) {
        const outcome = tool.run(state, args, ctx);
        return outcome.ok ? { ok: true, output: { hits: outcome.output, served: served++ } } : outcome;
      },
    }));
    expect(checkDeterminism(leaky)).toContainEqual(expect.stringMatching(/search_books gives different results for the same call on equal states/));
  });

  it('non-determinism in the user: replies depend on a counter shared by every user', () => {
    let replies = 0;
    const domain = createLibraryDomain();
    const chatty: Domain<LibraryState> = {
      ...domain,
      createUser(task, rng): SimulatedUser {
        const user = domain.createUser!(task, rng);
        return { opening: () => user.opening(), respond: (text, ctx) => ({ ...user.respond(text, ctx), text: `${user.respond(text, ctx).text} (${replies++})` }) };
      },
    };
    expect(checkDeterminism(chatty)).toContainEqual(expect.stringMatching(/two users built with the same rng answer differently/));
  });

  it('non-determinism in build: a task that depends on how often the template ran', () => {
    let built = 0;
    const drifting = defineTemplate({ ...returnTemplate, build: (p, ctx) => ({ ...returnTemplate.build(p, ctx), tags: [`build-${built++}`] }) });
    expect(checkDeterminism(withTemplates([borrowTemplate, drifting]))).toContainEqual(expect.stringMatching(/^library\/return@1 level 1 seed 1: building twice gives different tasks/));
  });
});
