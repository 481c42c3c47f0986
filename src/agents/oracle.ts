/** The `oracle` agent: plays the task's reference solution; the upper bound and a gate. */
import { EnvHarnessError, type Action, type Agent, type AgentContext, type AgentEpisode, type Observation } from '../core/index.js';
import { isFaultError } from './faults.js';

export interface OracleAgentOptions {
  /** Retries of an action that hit an injected fault (timeout, transient error, rate limit; default 3). */
  faultRetries?: number;
}

/**
 * A privileged agent that follows `ctx.task.spec.solution` action by action, retries calls that hit an
 * injected fault, and finishes when the solution is spent.
 * @example
 * const outcome = await runEpisode(domain, task, createOracleAgent(), { seed: 0 });
 */
export function createOracleAgent(options: OracleAgentOptions = {}): Agent {
  const faultRetries = options.faultRetries ?? 3;
  return {
    name: 'oracle',
    version: '1',
    privileged: true,
    config: () => ({ faultRetries }),
    begin(ctx: AgentContext): AgentEpisode {
      if (ctx.task === undefined) {
        throw new EnvHarnessError('PARAMS_INVALID', `the oracle needs the task in its context (episode ${ctx.episodeId}); run it with runEpisode, which hands the task to privileged agents`);
      }
      const solution = ctx.task.spec.solution;
      let next = 0;
      let retries = 0;
      let last: Action | undefined;
      return {
        act(observation: Observation): Action {
          if (last !== undefined && isFaultError(observation) && retries < faultRetries) {
            retries++;
            return last;
          }
          retries = 0;
          last = next < solution.length ? solution[next++]! : { type: 'finish' };
          return last;
        },
      };
    },
  };
}
