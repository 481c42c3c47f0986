import { describe, expect, it } from 'vitest';
import { BUILTIN_AGENT_NAMES, createAgent } from './index.js';

describe('createAgent', () => {
  it('builds every built-in agent by name', () => {
    for (const name of BUILTIN_AGENT_NAMES) {
      const agent = createAgent(name);
      expect(agent.name).toBe(name);
      expect(typeof agent.begin).toBe('function');
    }
    expect(createAgent('oracle').privileged).toBe(true);
    expect(createAgent('learner').privileged).toBeUndefined();
  });

  it('names the known agents when the name is unknown', () => {
    expect(() => createAgent('gpt')).toThrow(/no built-in agent "gpt"; known agents: random, rule-based, oracle, learner/);
  });

  it('records its configuration as plain JSON', () => {
    for (const name of BUILTIN_AGENT_NAMES) expect(JSON.parse(JSON.stringify(createAgent(name).config()))).toEqual(createAgent(name).config());
  });
});
