/**
 * The hot heads the front (http-front.ts) keeps server-wide: a step's request head, byte for byte (its request
 * line and every header, the token included), with what was parsed from it and the episode its token was
 * authorised for. A pooled client that round-robins its episodes over its connections sends each episode's head
 * on whichever connection is free; a head seen before is then neither parsed nor hashed again.
 *
 * Only heads whose token was authorised are kept, at most one per episode (a newer head of the same episode
 * replaces the older), at most `capacity` in all (the oldest kept goes first), and an episode's head goes when
 * the episode is closed: a flood of distinct heads can add an entry only with an episode's own token.
 */
export class HotHeads<H, E extends object> {
  private readonly byText = new Map<string, { head: H; ep: E }>();
  private readonly byEpisode = new Map<E, string>();

  constructor(readonly capacity: number) {}

  /** Heads kept now. */
  get size(): number {
    return this.byText.size;
  }

  /** The head kept for `text` and the episode it was authorised for (the caller checks that the episode is still open). */
  get(text: string): { head: H; ep: E } | undefined {
    return this.byText.get(text);
  }

  /** Keeps `head` (whose bytes are `text`) as authorised for `ep`. */
  keep(text: string, head: H, ep: E): void {
    const before = this.byEpisode.get(ep);
    if (before === text) return;
    if (before !== undefined) this.byText.delete(before);
    this.drop(text);
    if (this.byText.size >= this.capacity) this.drop(this.byText.keys().next().value!);
    this.byText.set(text, { head, ep });
    this.byEpisode.set(ep, text);
  }

  /** Forgets the head kept for `text` (its episode is gone, or its token no longer authorised). */
  drop(text: string): void {
    const kept = this.byText.get(text);
    if (kept === undefined) return;
    this.byText.delete(text);
    if (this.byEpisode.get(kept.ep) === text) this.byEpisode.delete(kept.ep);
  }

  /** Forgets the head kept for `ep` (closed). */
  forget(ep: E): void {
    const text = this.byEpisode.get(ep);
    if (text !== undefined) this.drop(text);
  }
}
