import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { canonicalize, canonicalizeFrozen, shareCanonical, takeCanonical } from './canonical-json.js';
import { digest } from './digest.js';
import { EnvHarnessError } from './errors.js';

/**
 * T14's long mode: RELIABILITY_T14=1 runs every property 10 000 times from a fixed seed (reproducible);
 * by default fast-check's 100 runs from a fresh seed.
 */
const T14 = process.env.RELIABILITY_T14 ? { numRuns: 10_000, seed: 14 } : {};

describe('canonicalize (RFC 8785)', () => {
  it('matches the RFC 8785 section 3.2.2 sample byte for byte', () => {
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],' +
        '"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    );
    expect(canonicalize(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('sorts keys by UTF-16 code units as in RFC 8785 section 3.2.3', () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    const keys = Object.keys(JSON.parse(canonicalize(input)) as object);
    // JSON.parse re-orders the integer-like key, so read the order from the text instead.
    expect(keys).toContain('1');
    const text = canonicalize(input);
    const order = ['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33'].map((k) => text.indexOf(JSON.stringify(k)));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it('serialises the RFC 8785 appendix B number samples', () => {
    const cases: Array<[number, string]> = [
      [0, '0'],
      [-0, '0'],
      [5e-324, '5e-324'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
      [-1.7976931348623157e308, '-1.7976931348623157e+308'],
      [9007199254740992, '9007199254740992'],
      [-9007199254740992, '-9007199254740992'],
      [295147905179352830000, '295147905179352830000'],
      [1e21, '1e+21'],
      [9.999999999999997e22, '9.999999999999997e+22'],
      [1e23, '1e+23'],
      [0.000001, '0.000001'],
      [1e-7, '1e-7'],
      [333333333.3333332, '333333333.3333332'],
    ];
    for (const [value, text] of cases) expect(canonicalize(value)).toBe(text);
  });

  it('puts integer-like keys in code-unit order, not V8 insertion order', () => {
    expect(canonicalize({ b: 1, '10': 2, '2': 3, a: 4 })).toBe('{"10":2,"2":3,"a":4,"b":1}');
  });

  it('rejects values with no canonical form, naming where they are', () => {
    for (const bad of [{ a: [1, NaN] }, { a: Infinity }, { a: 1n }, { s: 'x\ud800y' }]) {
      try {
        canonicalize(bad);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(EnvHarnessError);
        expect((error as EnvHarnessError).details?.pointer).toMatch(/^\/(a|s)/);
      }
    }
  });

  it('drops undefined object members and writes undefined array items as null, like JSON', () => {
    expect(canonicalize({ a: undefined, b: [undefined, 1] })).toBe('{"b":[null,1]}');
  });

  it('writes every object of a remembered key sequence by its own members (the shape cache)', () => {
    // The same key sequence with other values, with a member to drop, with lone-surrogate and escaped keys,
    // and one another order of the same keys: each is written from its own members.
    expect(canonicalize({ b: 1, a: 'x' })).toBe('{"a":"x","b":1}');
    expect(canonicalize({ b: [true], a: { d: null, c: 2 } })).toBe('{"a":{"c":2,"d":null},"b":[true]}');
    expect(canonicalize({ b: undefined, a: 3 })).toBe('{"a":3}');
    expect(canonicalize({ b: 1, a: undefined })).toBe('{"b":1}');
    expect(canonicalize({ a: 4, b: 5 })).toBe('{"a":4,"b":5}');
    expect(canonicalize({ 'q"': 1, '\n': 2 })).toBe('{"\\n":2,"q\\"":1}');
    expect(() => canonicalize({ '\ud800': 1 })).toThrow(EnvHarnessError);
    expect(() => canonicalize({ '\ud800': 1 })).toThrow(EnvHarnessError);
    expect(canonicalize({ b: 1, a: { b: 2, a: 3 }, c: [{ b: 4, a: 5 }] })).toBe('{"a":{"a":3,"b":2},"b":1,"c":[{"a":5,"b":4}]}');
  });

  it('writes objects of a frequent key sequence with its compiled writer exactly as the first ones', () => {
    // Past COMPILE_AFTER uses a shape is written by its own compiled function: every case below runs 20 times.
    const cases: Array<[() => unknown, string]> = [
      [() => ({ z: 'x', a: 1, m: true, b: null, c: [1, { y: 2, x: -0 }] }), '{"a":1,"b":null,"c":[1,{"x":0,"y":2}],"m":true,"z":"x"}'],
      [() => ({ z: 'q"\\\n\u0001é€😀', a: 1e21, m: false, b: 0.1, c: [] }), '{"a":1e+21,"b":0.1,"c":[],"m":false,"z":"q\\"\\\\\\n\\u0001é€😀"}'],
      [() => ({ z: undefined, a: 2, m: true, b: null, c: [] }), '{"a":2,"b":null,"c":[],"m":true}'],
      [() => ({ '\u20ac': 1, '\r': 2, '\ud83d\ude00': 3, '1': 4 }), '{"\\r":2,"1":4,"\u20ac":1,"\ud83d\ude00":3}'],
    ];
    for (const [make, expected] of cases) for (let i = 0; i < 20; i++) expect(canonicalize(make())).toBe(expected);
    // The compiled writer of a frequent shape still refuses what has no canonical form, and names it.
    for (let i = 0; i < 20; i++) canonicalize({ z: 'ok', a: 1, m: true, b: null, c: [] });
    expect(() => canonicalize({ z: 'ok', a: NaN, m: true, b: null, c: [] })).toThrow(/\/a: number NaN/);
    expect(() => canonicalize({ z: 'lone \ud800', a: 1, m: true, b: null, c: [] })).toThrow(/\/z: string contains a lone/);
    expect(() => canonicalize({ z: 'ok', a: 1, m: true, b: null, c: [Infinity] })).toThrow(/\/c\/0/);
    expect(() => canonicalize({ z: 'ok', a: 1, m: true, b: null, c: [() => 1] })).toThrow(EnvHarnessError);
    // Class instances and toJSON (own or on the prototype) never take a shape's writer.
    class Point {
      constructor(readonly x: number) {}
    }
    for (let i = 0; i < 20; i++) expect(canonicalize({ x: i })).toBe(`{"x":${i}}`);
    expect(canonicalize(new Point(3))).toBe('{"x":3}');
    for (let i = 0; i < 20; i++) expect(canonicalize({ x: 1, toJSON: () => ({ y: i }) })).toBe(`{"y":${i}}`);
    try {
      Object.defineProperty(Object.prototype, 'toJSON', { value: () => 'replaced', configurable: true, writable: true });
      expect(canonicalize({ x: 1 })).toBe('"replaced"');
    } finally {
      delete (Object.prototype as { toJSON?: unknown }).toJSON;
    }
    expect(canonicalize({ x: 1 })).toBe('{"x":1}');
  });

  it('writes frequent shapes where code generation is disallowed (node --disallow-code-generation-from-strings)', () => {
    const script = [
      "const { canonicalize } = await import('./src/core/canonical-json.ts');",
      'const out = [];',
      "for (let i = 0; i < 20; i++) out.push(canonicalize({ b: i, a: { d: 'x', c: [i] } }));",
      'process.stdout.write(out[19]);',
    ].join('\n');
    const text = execFileSync(process.execPath, ['--disallow-code-generation-from-strings', '--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      encoding: 'utf8',
    });
    expect(text).toBe('{"a":{"c":[19],"d":"x"},"b":19}');
  });

  it('stays right past the shape cache bounds (many keys, many key sequences)', () => {
    const wide: Record<string, number> = {};
    for (let i = 40; i > 0; i--) wide[`k${i}`] = i;
    const expected = `{${Object.keys(wide).sort().map((k) => `"${k}":${wide[k]}`).join(',')}}`;
    expect(canonicalize(wide)).toBe(expected);
    expect(canonicalize(wide)).toBe(expected);
    // Enough distinct key sequences to fill the trie several times over; earlier ones must still be right after.
    const wrong: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const record = { [`z${i}`]: i, [`y${i}`]: { [`x${i}`]: i } };
      if (canonicalize(record) !== `{"y${i}":{"x${i}":${i}},"z${i}":${i}}`) wrong.push(i);
    }
    expect(wrong).toEqual([]);
    expect(canonicalize({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
  });

  const json = fc.jsonValue({ maxDepth: 4 });

  test.prop([json], T14)('parses back to an equal value and is a fixed point', (value) => {
    const text = canonicalize(value);
    expect(canonicalize(JSON.parse(text))).toBe(text);
  });

  test.prop([fc.dictionary(fc.string(), json, { maxKeys: 12 }), fc.integer()], T14)(
    'does not depend on key insertion order',
    (record, seed) => {
      const keys = Object.keys(record);
      // A seeded rotation and reversal of the insertion order.
      const shift = keys.length === 0 ? 0 : Math.abs(seed) % keys.length;
      const reordered: Record<string, unknown> = {};
      // defineProperty, not `reordered[key] =`: assigning "__proto__" would set the prototype and drop the key.
      for (const key of [...keys.slice(shift), ...keys.slice(0, shift)].reverse()) {
        Object.defineProperty(reordered, key, { value: record[key], enumerable: true, writable: true, configurable: true });
      }
      expect(canonicalize(reordered)).toBe(canonicalize(record));
      expect(digest(reordered)).toBe(digest(record));
    },
  );

  it('keeps a "__proto__" key when rebuilt in another order (T14 regression)', () => {
    const record = JSON.parse('{"__proto__":1,"a":2}') as Record<string, unknown>;
    const reordered: Record<string, unknown> = {};
    for (const key of Object.keys(record).reverse()) Object.defineProperty(reordered, key, { value: record[key], enumerable: true, writable: true, configurable: true });
    expect(canonicalize(reordered)).toBe(canonicalize(record));
    expect(canonicalize(record)).toBe('{"__proto__":1,"a":2}');
  });

  test.prop([fc.double({ noNaN: true, noDefaultInfinity: true })], T14)('writes every finite double as ECMAScript does', (x) => {
    expect(canonicalize(x)).toBe(Object.is(x, -0) ? '0' : String(x));
    expect(JSON.parse(canonicalize(x))).toBe(Object.is(x, -0) ? 0 : x);
  });

  test.prop([fc.string({ unit: 'binary' })], T14)('escapes unicode strings so they read back unchanged', (s) => {
    fc.pre(!/[\ud800-\udfff]/.test(s) || s.isWellFormed());
    expect(JSON.parse(canonicalize(s))).toBe(s);
  });
});

describe('shareCanonical / takeCanonical: one object written once for two texts', () => {
  const transitionOf = (observation: object) => ({ step: 1, observation, episodeId: 'e', reward: 0 });

  it('keeps the text a write made for the marked member, once, and that text is the member\'s canonical JSON', () => {
    const observation = { kind: 'tool', output: { zeta: [1, 2.5, 'x'], alpha: { b: null, a: true } } };
    const expected = canonicalize(structuredClone(observation));
    shareCanonical(observation);
    const text = canonicalize(transitionOf(observation));
    expect(text).toBe(canonicalize(transitionOf(structuredClone(observation))));
    expect(takeCanonical(observation)).toBe(expected);
    // Taken: the mark is gone.
    expect(takeCanonical(observation)).toBeUndefined();
  });

  it('gives nothing for another object, for a marked object no write met, or once another object is marked', () => {
    const a = { kind: 'tool', output: 1 };
    const b = { kind: 'tool', output: 1 };
    shareCanonical(a);
    expect(takeCanonical(b)).toBeUndefined();
    expect(takeCanonical(a)).toBeUndefined();
    shareCanonical(a);
    canonicalize(transitionOf(a));
    shareCanonical(b);
    expect(takeCanonical(a)).toBeUndefined();
    // Written only at the top, or deeper than a member of the top value: not kept.
    canonicalize(b);
    canonicalize({ nested: { observation: b } });
    expect(takeCanonical(b)).toBeUndefined();
  });

  it('a marked member with no canonical form fails the write as before and leaves no text', () => {
    const observation = { kind: 'tool', output: { value: Number.NaN } };
    shareCanonical(observation);
    expect(() => canonicalize(transitionOf(observation))).toThrow(/cannot canonicalise \/observation\/output\/value: number NaN/);
    expect(takeCanonical(observation)).toBeUndefined();
  });

  it('a value that merely looks like a written text is written as data', () => {
    const observation = { kind: 'tool', output: 'x' };
    shareCanonical(observation);
    canonicalize(transitionOf(observation));
    const lookalike = { kind: 'tool', output: 'x' };
    // Equal content, another object: written from its own members, and the mark still holds the first.
    expect(canonicalize(transitionOf({ ...lookalike, output: '{"kind":"tool"}' }))).toContain('"output":"{\\"kind\\":\\"tool\\"}"');
    expect(takeCanonical(lookalike)).toBeUndefined();
    expect(takeCanonical(observation)).toBe('{"kind":"tool","output":"x"}');
  });
});

describe('deep-frozen objects are written once', () => {
  // Looked up from depth 2 down, where a transition's tool output is: `{"observation":{"output":...}}`.
  const deep = (value: unknown) => ({ observation: { output: value } });
  const text = (inner: string) => `{"observation":{"output":${inner}}}`;

  it('a deep-frozen record gives the same text every time, the text of an unfrozen copy', () => {
    const record = deepFreeze({ zeta: [1, { b: 'x', a: null }], alpha: { n: 2.5 } });
    const expected = canonicalize(structuredClone(record));
    expect(canonicalize(deep(record))).toBe(text(expected));
    expect(canonicalize(deep({ wrapper: record, again: record }))).toBe(text(`{"again":${expected},"wrapper":${expected}}`));
    expect(canonicalize(deep(record))).toBe(text(expected));
    expect(canonicalize(record)).toBe(expected);
  });

  it('a frozen object holding a mutable one is written afresh: a change below shows', () => {
    const inner = { n: 1 };
    const outer = Object.freeze({ inner, list: Object.freeze([inner]) });
    expect(canonicalize(deep(outer))).toBe(text('{"inner":{"n":1},"list":[{"n":1}]}'));
    inner.n = 2;
    expect(canonicalize(deep(outer))).toBe(text('{"inner":{"n":2},"list":[{"n":2}]}'));
  });

  it('a frozen object with a getter is written afresh: the getter\'s new answer shows', () => {
    let n = 1;
    const record = Object.freeze(Object.defineProperty({ a: 0 }, 'n', { get: () => n, enumerable: true }));
    expect(canonicalize(deep(record))).toBe(text('{"a":0,"n":1}'));
    n = 2;
    expect(canonicalize(deep(record))).toBe(text('{"a":0,"n":2}'));
  });

  it('a frozen object holding a frozen one with a getter is written afresh: the getter below shows', () => {
    let n = 1;
    const inner = Object.freeze(Object.defineProperty({ a: 0 }, 'n', { get: () => n, enumerable: true }));
    const outer = Object.freeze({ inner, tag: 'x' });
    expect(canonicalize(deep(outer))).toBe(text('{"inner":{"a":0,"n":1},"tag":"x"}'));
    n = 2;
    expect(canonicalize(deep(outer))).toBe(text('{"inner":{"a":0,"n":2},"tag":"x"}'));
  });

  it('canonicalizeFrozen writes what canonicalize writes, and a record it wrote is the same text inside a transition', () => {
    const record = deepFreeze({ order_id: '#W1', address: { city: 'Miami', zip: '33121' }, items: [{ id: '1', price: 2.5 }], history: [] });
    const expected = '{"address":{"city":"Miami","zip":"33121"},"history":[],"items":[{"id":"1","price":2.5}],"order_id":"#W1"}';
    expect(canonicalizeFrozen(record)).toBe(expected);
    expect(canonicalizeFrozen(record)).toBe(expected);
    expect(canonicalize(deep(record))).toBe(text(expected));
    expect(canonicalizeFrozen({ n: 1, b: [true, null] })).toBe('{"b":[true,null],"n":1}');
  });

  it('canonicalizeFrozen keeps no text of a record with a mutable member or a getter: a change shows', () => {
    const inner = { n: 1 };
    const withMutable = Object.freeze({ inner });
    let g = 1;
    const withGetter = Object.freeze(Object.defineProperty({ a: 0 }, 'g', { get: () => g, enumerable: true }));
    expect(canonicalizeFrozen(withMutable)).toBe('{"inner":{"n":1}}');
    expect(canonicalizeFrozen(withGetter)).toBe('{"a":0,"g":1}');
    inner.n = 2;
    g = 2;
    expect(canonicalizeFrozen(withMutable)).toBe('{"inner":{"n":2}}');
    expect(canonicalize(deep(withMutable))).toBe(text('{"inner":{"n":2}}'));
    expect(canonicalize(deep(withGetter))).toBe(text('{"a":0,"g":2}'));
  });

  it('canonicalizeFrozen with a memo writes through it and keeps the top text for writers without one, on the memo owner\'s word', () => {
    const memo = new WeakMap<object, string>();
    const address = deepFreeze({ city: 'Miami', zip: '33121' });
    const record = deepFreeze({ order_id: '#W1', address, items: [{ id: '1', price: 2.5 }] });
    const expected = '{"address":{"city":"Miami","zip":"33121"},"items":[{"id":"1","price":2.5}],"order_id":"#W1"}';
    expect(canonicalizeFrozen(record, memo)).toBe(expected);
    expect(memo.get(address)).toBe('{"city":"Miami","zip":"33121"}');
    expect(memo.get(record)).toBe(expected);
    // The memo's owner vouches for its frozen objects (no member is checked): a getter on the top is read once,
    // and a transition written later splices the kept text.
    let g = 1;
    const vouched = Object.freeze(Object.defineProperty({ a: 0 }, 'g', { get: () => g, enumerable: true }));
    expect(canonicalizeFrozen(vouched, memo)).toBe('{"a":0,"g":1}');
    g = 2;
    expect(canonicalize(deep(vouched))).toBe(text('{"a":0,"g":1}'));
    // A mutable top is never kept: a change shows.
    const mutable = { n: 1 };
    expect(canonicalizeFrozen(mutable, memo)).toBe('{"n":1}');
    mutable.n = 2;
    expect(canonicalize(deep(mutable))).toBe(text('{"n":2}'));
  });

  it('canonicalizeFrozen refuses what has no canonical form, naming the member', () => {
    expect(() => canonicalizeFrozen(deepFreeze({ ok: 1, bad: { n: Number.NaN } }))).toThrow(/\/bad\/n: number NaN/);
  });

  it('a deep-frozen value with no canonical form still fails, every time, naming the member', () => {
    const record = deepFreeze({ ok: { a: 1 }, bad: { n: Number.NaN } });
    expect(() => canonicalize(deep(record))).toThrow(/\/observation\/output\/bad\/n: number NaN/);
    expect(() => canonicalize(deep(record))).toThrow(/\/observation\/output\/bad\/n: number NaN/);
    expect(canonicalize(deep(record.ok))).toBe(text('{"a":1}'));
  });
});

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}
