/**
 * Idempotency keys that fell out of an episode's reply window, kept as 64-bit fingerprints. The contract (docs/http.md,
 * "The window") is that such a key is known as used for the episode's whole life, so the set only grows, and a long
 * training session sends millions of keys on one episode. A million keys of 21 characters (the Python client's are
 * 18 hex digits, a dash and a counter) held 77 bytes each as strings in a `Set`, 16.8 as fingerprints in this
 * open-addressing table (at most half full: 16-32 bytes a key by how full it is).
 *
 * A fingerprint is two 32-bit lanes of a multiply-xorshift hash over the key's UTF-16 units, each with its own
 * constants. A new key taken for a forgotten one would be answered `IDEMPOTENCY_FORGOTTEN` (refused, never applied
 * twice): with an ideal 64-bit hash, about 3 in 10^8 over a million keys on one episode; none of a million new keys
 * was taken for one of a million stored in that measurement.
 */
export class KeyFingerprints {
  /** Slots of two lanes each; (0, 0) marks an empty slot (a fingerprint that is (0, 0) is stored as (0, 1)). */
  private table = new Uint32Array(0);
  private used = 0;

  get size(): number {
    return this.used;
  }

  add(key: string): void {
    if (this.table.length === 0 || (this.used + 1) * 2 > this.table.length / 2) this.grow();
    const [hi, lo] = fingerprint(key);
    if (insert(this.table, hi, lo)) this.used++;
  }

  has(key: string): boolean {
    if (this.used === 0) return false;
    const [hi, lo] = fingerprint(key);
    const table = this.table;
    const mask = table.length / 2 - 1;
    for (let slot = hi & mask; ; slot = (slot + 1) & mask) {
      const h = table[slot * 2]!;
      const l = table[slot * 2 + 1]!;
      if (h === 0 && l === 0) return false;
      if (h === hi && l === lo) return true;
    }
  }

  /** Doubles the table (at most half full after), re-inserting every fingerprint. */
  private grow(): void {
    const old = this.table;
    const slots = Math.max(64, old.length); // old.length / 2 slots before: twice as many now
    const table = new Uint32Array(slots * 2);
    for (let i = 0; i < old.length; i += 2) {
      if (old[i] !== 0 || old[i + 1] !== 0) insert(table, old[i]!, old[i + 1]!);
    }
    this.table = table;
  }
}

/** Inserts a fingerprint by linear probing; false when it is there already. */
function insert(table: Uint32Array, hi: number, lo: number): boolean {
  const mask = table.length / 2 - 1;
  for (let slot = hi & mask; ; slot = (slot + 1) & mask) {
    const h = table[slot * 2]!;
    const l = table[slot * 2 + 1]!;
    if (h === 0 && l === 0) {
      table[slot * 2] = hi;
      table[slot * 2 + 1] = lo;
      return true;
    }
    if (h === hi && l === lo) return false;
  }
}

const LANES: [number, number] = [0, 0];

/** Two 32-bit lanes (unsigned), each a multiply-xorshift hash of the key's UTF-16 units with its own seed. */
function fingerprint(key: string): [number, number] {
  let a = 0x9e3779b9 ^ key.length;
  let b = 0x85ebca6b ^ key.length;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x2c1b3c6d);
    a ^= a >>> 15;
    b = Math.imul(b ^ c, 0x297a2d39);
    b ^= b >>> 13;
  }
  a = Math.imul(a ^ (a >>> 16), 0x85ebca6b);
  a ^= a >>> 13;
  b = Math.imul(b ^ (b >>> 16), 0xc2b2ae35);
  b ^= b >>> 16;
  LANES[0] = a >>> 0;
  LANES[1] = b >>> 0 || (LANES[0] === 0 ? 1 : 0);
  return LANES;
}
