/** Built-in agents (random, rule-based, oracle, learner): the whole loop runs on one machine without a model. */
import { EnvHarnessError, type Agent } from '../core/index.js';
import { createLearnerAgent, type LearnerOptions } from './learner.js';
import { createOracleAgent, type OracleAgentOptions } from './oracle.js';
import { createRandomAgent, type RandomAgentOptions } from './random.js';
import { createRuleBasedAgent, type RuleBasedAgentOptions } from './rule-based.js';

export { createRandomAgent, type RandomAgentOptions } from './random.js';
export { createOracleAgent, type OracleAgentOptions } from './oracle.js';
export { createRuleBasedAgent, type RuleBasedAgentOptions } from './rule-based.js';
export { createLearnerAgent, DEFAULT_LEARNER_SHAPING, LEARNER_STATE_FORMAT, type LearnerAgent, type LearnerOptions } from './learner.js';
export { genericSkills, type SkillSet, type SkillTracker } from './skill-set.js';
export { FAULT_ERROR_CODES, isFaultError } from './faults.js';

/** Names `createAgent` knows. */
export const BUILTIN_AGENT_NAMES = ['random', 'rule-based', 'oracle', 'learner'] as const;
export type BuiltinAgentName = (typeof BUILTIN_AGENT_NAMES)[number];

/** Options per built-in agent name. */
export interface BuiltinAgentOptions {
  random: RandomAgentOptions;
  'rule-based': RuleBasedAgentOptions;
  oracle: OracleAgentOptions;
  learner: LearnerOptions;
}

/**
 * A built-in agent by name.
 * @example
 * const learner = createAgent('learner', { seed: 1, state: saved });
 */
export function createAgent<N extends BuiltinAgentName>(name: N, options?: BuiltinAgentOptions[N]): Agent;
export function createAgent(name: string, options?: unknown): Agent;
export function createAgent(name: string, options: unknown = {}): Agent {
  switch (name) {
    case 'random':
      return createRandomAgent(options as RandomAgentOptions);
    case 'rule-based':
      return createRuleBasedAgent(options as RuleBasedAgentOptions);
    case 'oracle':
      return createOracleAgent(options as OracleAgentOptions);
    case 'learner':
      return createLearnerAgent(options as LearnerOptions);
    default:
      throw new EnvHarnessError('PARAMS_INVALID', `no built-in agent "${name}"; known agents: ${BUILTIN_AGENT_NAMES.join(', ')}`, {
        details: { pointer: '/agent', known: [...BUILTIN_AGENT_NAMES] },
      });
  }
}
