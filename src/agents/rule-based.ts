/** The `rule-based` agent: the scripted baseline of whichever domain the episode runs in (`domain.baselines`). */
import type { Action, Agent, AgentContext, AgentEpisode, Domain } from '../core/index.js';

export interface RuleBasedAgentOptions {
  /** Domains whose `baselines['rule-based']` it plays; on any other domain it finishes at once. */
  domains?: ReadonlyArray<Pick<Domain, 'name' | 'baselines'>>;
  /** Retries of a call that hit an injected fault (default 2), passed to the domain's baseline. */
  faultRetries?: number;
  /** How often it asks for the same fact before handing over to a human (default 2), passed on likewise. */
  maxAsks?: number;
}

const FINISH: AgentEpisode = { act: (): Action => ({ type: 'finish' }) };

/**
 * Creates the rule-based agent: each episode is played by the episode's domain's own scripted baseline,
 * built once per domain with these options. A domain without one gets an agent that finishes at once.
 * @example
 * const bot = createRuleBasedAgent({ domains: [retail] });
 */
export function createRuleBasedAgent(options: RuleBasedAgentOptions = {}): Agent {
  const faultRetries = options.faultRetries ?? 2;
  const maxAsks = options.maxAsks ?? 2;
  const factories = new Map((options.domains ?? []).map((d) => [d.name, d.baselines?.['rule-based']] as const));
  // One baseline per domain, built on first use: baselines hold no state across episodes.
  const bots = new Map<string, Agent | undefined>();
  const botFor = (domain: string): Agent | undefined => {
    if (!bots.has(domain)) bots.set(domain, factories.get(domain)?.({ faultRetries, maxAsks }));
    return bots.get(domain);
  };
  return {
    name: 'rule-based',
    version: '2',
    config: () => ({ faultRetries, maxAsks }),
    begin(ctx: AgentContext): AgentEpisode {
      return botFor(ctx.domain)?.begin(ctx) ?? FINISH;
    },
  };
}
