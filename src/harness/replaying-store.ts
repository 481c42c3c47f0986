/** A harness's view of its store: the transitions of episodes recorded as their inputs are rebuilt by replay when read. */
import { canonicalize, EnvHarnessError, type Domain, type Store, type Transition } from '../core/index.js';
import { rebuildTransitions } from '../runtime/index.js';

/**
 * `store` with a `listTransitions` that also answers for episodes recorded as their inputs (`EpisodeRecord.inputs`):
 * their stored task is replayed with the registered domain and its transitions returned (REPLAY_DIVERGED when the
 * replay does not end as recorded). Every other member is the store's own, called on the store itself.
 * `restore`: let a domain restore what its tasks need from this store (`Domain.restore`) before its first replay
 * (a harness's domains have done so in `initialize`; a store opened on its own has not).
 */
export function replayingStore(store: Store, domains: ReadonlyMap<string, Domain<any>>, options: { restore?: boolean } = {}): Store {
  const restored = new Set<string>();
  const listStored = store.listTransitions.bind(store);
  const listTransitions = async (episodeId: string): Promise<Transition[]> => {
    const stored = await listStored(episodeId);
    if (stored.length > 0) return stored;
    const record = await store.getEpisode(episodeId);
    if (record?.inputs === undefined) return stored;
    const task = await store.getTask(record.taskId);
    if (task === undefined) {
      throw new EnvHarnessError('TASK_NOT_FOUND', `episode ${episodeId} was recorded as its inputs and needs its task ${record.taskId} to replay, which is not in this store`, {
        details: { episodeId, taskId: record.taskId },
      });
    }
    const domain = domains.get(task.domain);
    if (domain === undefined) {
      throw new EnvHarnessError('DOMAIN_NOT_FOUND', `episode ${episodeId} was recorded as its inputs and replays on domain ${task.domain}, which is not registered`, {
        details: { episodeId, domain: task.domain },
      });
    }
    if (options.restore === true && domain.restore !== undefined && !restored.has(domain.name)) {
      await domain.restore(store);
      restored.add(domain.name);
    }
    // As a store returns them: read back from their canonical JSON (members in key order), so that whatever writes
    // them out again (an export's JSON.stringify) writes the bytes it writes for a transitions recording.
    return rebuildTransitions(domain, task, record).map((t) => JSON.parse(canonicalize(t)) as Transition);
  };
  // The store's own methods, each bound to the store once (a store class may keep private state that needs `this`
  // to be the store); by function, so that a method replaced on the store is seen.
  const bound = new WeakMap<object, unknown>();
  return new Proxy(store, {
    get(target, key) {
      if (key === 'listTransitions') return listTransitions;
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      let fn = bound.get(value);
      if (fn === undefined) bound.set(value, (fn = (value as (...args: unknown[]) => unknown).bind(target)));
      return fn;
    },
  });
}
