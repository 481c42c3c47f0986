/**
 * Memos kept on the object they are about, under a symbol (no digest, JSON or structuredClone sees symbols).
 * Not a WeakMap keyed by the object: a fresh world's config and stores are young objects, and weak entries
 * keyed by young objects (ephemerons) make every scavenge slower. What is kept must be a pure function of the
 * object's content, which never changes once the object is made.
 */

/** What sits under the symbol: the memo, and the object it was made for (a spread copy carries it, but is not that object). */
interface Held<M> {
  readonly owner: object;
  readonly memo: M;
}

/** Memos of objects that cannot take a property (frozen, sealed), per symbol. */
const sealed = new WeakMap<object, Map<symbol, unknown>>();

/** The memo `key` of `target`, made by `make` the first time `target` is asked for it. */
export function memoOn<M>(target: object, key: symbol, make: () => M): M {
  const held = (target as Record<symbol, Held<M> | undefined>)[key];
  if (held !== undefined && held.owner === target) return held.memo;
  if (!Object.isExtensible(target)) {
    let memos = sealed.get(target);
    if (memos === undefined) sealed.set(target, (memos = new Map()));
    let memo = memos.get(key) as M | undefined;
    if (memo === undefined) memos.set(key, (memo = make()));
    return memo;
  }
  const memo = make();
  (target as Record<symbol, Held<M>>)[key] = { owner: target, memo };
  return memo;
}
