/** Transitions of episodes run outside the harness: recorded to the store with process feedback. */
import type { Action, Feedback, JsonObject, Observation, Store } from '../core/index.js';
import { validateAction } from '../runtime/index.js';

interface History {
  calls: Set<string>;
  steps: number;
}

/**
 * Per external episode, the tool calls seen and the next step. An episode first met here is read back
 * from the store (its stored transitions), so the feedback and step numbers do not depend on which
 * harness, or which process, recorded the earlier steps.
 */
export class ExternalTransitions {
  private readonly episodes = new Map<string, Promise<History>>();

  constructor(private readonly store: Store) {}

  /** Records one transition; INVALID_ACTION (with the JSON pointer) for a malformed action, REDUNDANT_CALL for a repeated tool call. */
  async record(observation: Observation, action: unknown, reward: number, nextObservation: Observation, episodeId: string): Promise<{ feedback: Feedback[]; step: number }> {
    const history = await this.historyOf(episodeId);
    const feedback: Feedback[] = [];
    const issue = validateAction(action);
    if (issue) feedback.push({ code: 'INVALID_ACTION', message: issue.message, pointer: issue.pointer });
    else {
      const a = action as Action;
      if (a.type === 'tool') {
        const key = callKey(a);
        if (history.calls.has(key)) feedback.push({ code: 'REDUNDANT_CALL', message: `${a.tool} was already called with these arguments` });
        history.calls.add(key);
      }
    }
    const step = history.steps++;
    await this.store.appendTransitions([
      {
        episodeId,
        step,
        action: (issue ? { type: 'message', text: JSON.stringify(action ?? null) } : action) as Action,
        observation: nextObservation,
        reward,
        terminated: false,
        truncated: false,
        feedback,
        info: { step, outcome: 0, shaping: 0, stateHash: '', previous: observation as unknown as JsonObject },
      },
    ]);
    return { feedback, step };
  }

  private historyOf(episodeId: string): Promise<History> {
    let history = this.episodes.get(episodeId);
    if (history === undefined) {
      // The promise is kept, so calls that overlap share one read.
      history = this.store.listTransitions(episodeId).then((stored) => ({
        calls: new Set(stored.flatMap((t) => (t.action.type === 'tool' ? [callKey(t.action)] : []))),
        steps: stored.length,
      }));
      history.catch(() => this.episodes.delete(episodeId));
      this.episodes.set(episodeId, history);
    }
    return history;
  }
}

function callKey(action: Extract<Action, { type: 'tool' }>): string {
  return JSON.stringify([action.tool, action.args]);
}
