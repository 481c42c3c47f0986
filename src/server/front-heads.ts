/**
 * The hot heads the front (http-front.ts) keeps server-wide: a step's request head (its bytes, what was parsed
 * from them, and the episode its token was authorised for), found by a key of its request target (the front uses
 * a hash of the target's bytes). A pooled client that round-robins its episodes over its connections sends each
 * episode's head on whichever connection is free; a head kept and repeated byte for byte (the front compares the
 * bytes, so a head kept under the same key for another target is not taken) is neither parsed nor hashed again.
 *
 * Only heads whose token was authorised are kept, one per key and one per episode (a newer head replaces the
 * older), at most `capacity` in all (the oldest kept goes first), and an episode's head goes when the episode is
 * closed: a flood of distinct heads can add an entry only with an episode's own token.
 */
export class HotHeads<K, H, E extends object> {
  private readonly byKey = new Map<K, { head: H; ep: E }>();
  private readonly byEpisode = new Map<E, K>();

  constructor(readonly capacity: number) {}

  /** Heads kept now. */
  get size(): number {
    return this.byKey.size;
  }

  /** The head kept under `key` and the episode it was authorised for (the caller checks the bytes, and that the episode is still open). */
  get(key: K): { head: H; ep: E } | undefined {
    return this.byKey.get(key);
  }

  /** Keeps `head` under `key`, authorised for `ep`. */
  keep(key: K, head: H, ep: E): void {
    const before = this.byEpisode.get(ep);
    if (before !== undefined) this.remove(before);
    this.remove(key);
    if (this.byKey.size >= this.capacity) this.remove(this.byKey.keys().next().value!);
    this.byKey.set(key, { head, ep });
    this.byEpisode.set(ep, key);
  }

  /** Forgets `head` if it is the one kept under `key` (its token no longer opens its episode). */
  drop(key: K, head: H): void {
    if (this.byKey.get(key)?.head === head) this.remove(key);
  }

  /** Forgets the head kept for `ep` (closed). */
  forget(ep: E): void {
    const key = this.byEpisode.get(ep);
    if (key !== undefined) this.remove(key);
  }

  private remove(key: K): void {
    const kept = this.byKey.get(key);
    if (kept === undefined) return;
    this.byKey.delete(key);
    if (this.byEpisode.get(kept.ep) === key) this.byEpisode.delete(kept.ep);
  }
}
