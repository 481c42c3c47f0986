import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { canonicalize, createRng, EnvHarnessError, MINHASH_PERMUTATIONS, SHINGLE_SIZE } from '../core/index.js';
import type { JsonValue } from '../core/index.js';
import { retailTemplates } from '../domains/retail/index.js';
import { bandKeysOf, estimateSimilarity, MinHashIndex, minhashTask, minhashText, normalizeWords, signatureOfFeatures, simdSignatureOfFeatures } from './minhash.js';
import { instantiateTask } from './instantiate.js';
import { storyTemplate } from './testing/templates.js';
import { jsonValue as arbitraryJson } from './testing/arbitraries.js';

const WORDS = 'the a courier parcel van road river hill bakery team list route customer address gate market boat island harbour depot'.split(' ');

function text(rng: ReturnType<typeof createRng>, length: number): string[] {
  return Array.from({ length }, () => rng.pick(WORDS));
}

describe('normalizeWords', () => {
  it('lower-cases, strips punctuation and collapses whitespace', () => {
    expect(normalizeWords('  Hello,   WORLD!\n(It\'s) 3+4=7  ')).toEqual(['hello', 'world', 'it', 's', '3', '4', '7']);
  });
});

describe('minhash signatures', () => {
  it('are pinned: the permutations never change across versions', () => {
    expect(Array.from(minhashText('What is 3 + 4?', { a: 3, b: 4 }).slice(0, 4))).toMatchInlineSnapshot(`
      [
        240532593,
        477647830,
        1468367314,
        2039960757,
      ]
    `);
  });

  it('see through case, punctuation and spacing, but not through params', () => {
    expect(estimateSimilarity(minhashText('What is 3 + 4?'), minhashText('what   is 3 4'))).toBe(1);
    expect(estimateSimilarity(minhashText('What is 3 + 4?', { a: 3 }), minhashText('What is 3 + 4?', { a: 4 }))).toBeLessThan(1);
  });

  it('rate a one-word paraphrase of a long text as a near duplicate and unrelated texts as far apart', () => {
    const a = instantiateTask(storyTemplate, { level: 1, seed: 1, index: 0 });
    let b = a;
    for (let index = 1; b.params && (b.params as { word: string }).word === (a.params as { word: string }).word; index++) {
      b = instantiateTask(storyTemplate, { level: 1, seed: 1, index });
    }
    expect(estimateSimilarity(minhashTask(a), minhashTask(b))).toBeGreaterThanOrEqual(0.9);
    expect(estimateSimilarity(minhashTask(a), minhashText('What is 3 + 4?', { a: 3, b: 4 }))).toBeLessThan(0.1);
  });

  it('estimate Jaccard similarity within three standard errors of 64 permutations', () => {
    const rng = createRng(['minhash-test']);
    for (let trial = 0; trial < 20; trial++) {
      const words = Array.from({ length: 200 }, (_, i) => `w${i}`);
      const changed = [...words];
      const k = rng.int(0, 40);
      for (let i = 0; i < k; i++) changed[rng.int(0, 199)] = `x${trial}-${i}`;
      const shingles = (ws: string[]): Set<string> => new Set(ws.slice(2).map((_, i) => ws.slice(i, i + 3).join(' ')));
      const sa = shingles(words);
      const sb = shingles(changed);
      const exact = [...sa].filter((s) => sb.has(s)).length / new Set([...sa, ...sb]).size;
      const estimate = estimateSimilarity(minhashText(words.join(' ')), minhashText(changed.join(' ')));
      expect(Math.abs(estimate - exact)).toBeLessThan(0.2);
    }
  });
});

describe('MinHashIndex', () => {
  it('finds a match whenever a linear scan finds one, at any threshold (exact LSH)', () => {
    const rng = createRng(['lsh-recall']);
    const index = new MinHashIndex();
    const stored: Array<[string, Uint32Array]> = [];
    for (let i = 0; i < 300; i++) {
      const base = i > 0 && rng.chance(0.5) ? normalizeWords(String(stored[rng.int(0, stored.length - 1)]![0])) : text(rng, 40);
      const words = base.map((w) => (rng.chance(0.08) ? rng.pick(WORDS) : w));
      const signature = minhashText(words.join(' '));
      index.addSignature(words.join(' '), signature);
      stored.push([words.join(' '), signature]);
    }
    let positives = 0;
    for (let q = 0; q < 200; q++) {
      const query = minhashText(text(rng, 40).join(' '));
      const probe = rng.chance(0.7) ? stored[rng.int(0, stored.length - 1)]![1] : query;
      for (const threshold of [0.3, 0.7, 0.8, 0.9, 0.95]) {
        const brute = stored.some(([, s]) => estimateSimilarity(s, probe) >= threshold);
        const found = index.findSimilar(probe, threshold);
        expect(found !== undefined).toBe(brute);
        if (found) expect(found.similarity).toBeGreaterThanOrEqual(threshold);
        if (brute) positives++;
      }
    }
    expect(positives).toBeGreaterThan(300);
  });

  it('returns the first match in band order, then insertion order, as a scan of the bands does', () => {
    const rng = createRng(['lsh-order']);
    const index = new MinHashIndex();
    const stored: Array<[string, Uint32Array]> = [];
    const reference = (probe: Uint32Array, threshold: number) => {
      const keys = bandKeysOf(probe, threshold);
      const compared = new Set<string>();
      for (let band = 0; band < keys.length; band++) {
        for (const [id, signature] of stored) {
          if (compared.has(id) || bandKeysOf(signature, threshold)[band] !== keys[band]) continue;
          compared.add(id);
          const similarity = estimateSimilarity(signature, probe);
          if (similarity >= threshold) return { id, similarity };
        }
      }
      return undefined;
    };
    // Many close variants of a few texts: long chains, slot collisions and several table growths.
    const roots = Array.from({ length: 5 }, () => text(rng, 30));
    for (let i = 0; i < 600; i++) {
      const words = rng.pick(roots).map((w) => (rng.chance(0.05) ? rng.pick(WORDS) : w));
      const id = `t${i}`;
      const signature = minhashText(words.join(' '), { i: i % 7 });
      // Some entries come with their band keys, as the gate runner adds them; the rest are keyed here.
      index.addSignature(id, signature, rng.chance(0.5) ? bandKeysOf(signature, 0.9) : undefined);
      stored.push([id, signature]);
      if (i % 50 === 49) {
        for (const threshold of [0.5, 0.9]) {
          const probe = minhashText(rng.pick(roots).join(' '), { i: rng.int(0, 6) });
          expect(index.findSimilar(probe, threshold)).toEqual(reference(probe, threshold));
          expect(index.findSimilar(probe, threshold, bandKeysOf(probe, threshold))).toEqual(reference(probe, threshold));
        }
      }
    }
  });

  it('answers the same with a capacity allocated up front and without an id map (uniqueIds), below and past the capacity', () => {
    const rng = createRng(['lsh-presized']);
    const plain = new MinHashIndex();
    const presized = new MinHashIndex({ capacity: 150, uniqueIds: true });
    const roots = Array.from({ length: 4 }, () => text(rng, 30));
    for (let i = 0; i < 400; i++) {
      const signature = minhashText(rng.pick(roots).map((w) => (rng.chance(0.05) ? rng.pick(WORDS) : w)).join(' '), { i: i % 5 });
      const keys = rng.chance(0.5) ? bandKeysOf(signature, 0.9) : undefined;
      plain.addSignature(`t${i}`, signature, keys);
      presized.addSignature(`t${i}`, signature, keys);
      if (i % 40 === 39) {
        const probe = minhashText(rng.pick(roots).join(' '), { i: rng.int(0, 4) });
        for (const threshold of [0.5, 0.9]) expect(presized.findSimilar(probe, threshold)).toEqual(plain.findSimilar(probe, threshold));
      }
    }
    expect(presized.size).toBe(400);
    expect(presized.has('t399')).toBe(true);
    expect(presized.has('t400')).toBe(false);
    expect(presized.signatureOf('t123')).toEqual(plain.signatureOf('t123'));
    expect(presized.toJSON()).toEqual(plain.toJSON());
  });

  it('addAll gives the index that adding each entry in order gives: bands copied or computed, past its capacity, with ids present', () => {
    const rng = createRng(['lsh-add-all']);
    const roots = Array.from({ length: 4 }, () => text(rng, 30));
    const signatureAt = (i: number) => minhashText(rng.pick(roots).map((w) => (rng.chance(0.05) ? rng.pick(WORDS) : w)).join(' '), { i: i % 5 });
    const probes = Array.from({ length: 12 }, () => minhashText(rng.pick(roots).join(' '), { i: rng.int(0, 4) }));
    const answers = (index: MinHashIndex) => probes.flatMap((probe) => [0.5, 0.8, 0.9].map((threshold) => index.findSimilar(probe, threshold)));
    const entries = Array.from({ length: 300 }, (_, i) => ({ id: `t${i}`, signature: signatureAt(i) }));

    // target: 100 entries, banded for 0.5, 0.8 and 0.9; source: the next 200, banded for 0.9 only (the others are computed).
    const one = new MinHashIndex();
    const bulk = new MinHashIndex();
    const source = new MinHashIndex({ capacity: 200, uniqueIds: true });
    for (const { id, signature } of entries.slice(0, 100)) for (const index of [one, bulk]) index.addSignature(id, signature);
    for (const index of [one, bulk]) answers(index).splice(0);
    for (const { id, signature } of entries.slice(100)) source.addSignature(id, signature);
    source.findSimilar(probes[0]!, 0.9);
    for (const { id, signature } of entries.slice(100)) one.addSignature(id, signature);
    bulk.addAll(source);
    expect(bulk.size).toBe(300);
    expect(bulk.idAt(299)).toBe('t299');
    expect(bulk.signatureOf('t250')).toEqual(one.signatureOf('t250'));
    expect(answers(bulk)).toEqual(answers(one));
    expect(answers(bulk).some((match) => match !== undefined && Number(match.id.slice(1)) >= 100)).toBe(true);
    expect(bulk.toJSON()).toEqual(one.toJSON());

    // A source that repeats ids the index holds: those are skipped, as addSignature skips them.
    const again = new MinHashIndex();
    for (const { id, signature } of [...entries.slice(290), { id: 't5', signature: entries[6]!.signature }]) again.addSignature(id, signature);
    bulk.addAll(again);
    for (const { id, signature } of entries.slice(290)) one.addSignature(id, signature);
    one.addSignature('t5', entries[6]!.signature);
    expect(bulk.size).toBe(300);
    expect(bulk.toJSON()).toEqual(one.toJSON());
    expect(answers(bulk)).toEqual(answers(one));
  });

  it('round-trips through JSON', () => {
    const index = new MinHashIndex();
    for (let i = 0; i < 40; i++) index.add(instantiateTask(storyTemplate, { level: 1, seed: 2, index: i }));
    const copy = MinHashIndex.fromJSON(JSON.parse(JSON.stringify(index)));
    expect(copy.size).toBe(index.size);
    expect(copy.toJSON()).toEqual(index.toJSON());
    const probe = minhashTask(instantiateTask(storyTemplate, { level: 1, seed: 3, index: 0 }));
    expect(copy.findSimilar(probe, 0.9)).toEqual(index.findSimilar(probe, 0.9));
  });

  it('ignores an id added twice and refuses foreign formats with IMPORT_INVALID', () => {
    const index = new MinHashIndex();
    index.addSignature('a', minhashText('one two three'));
    index.addSignature('a', minhashText('four five six'));
    expect(index.size).toBe(1);
    expect(index.has('a')).toBe(true);
    expect(estimateSimilarity(index.signatureOf('a')!, minhashText('one two three'))).toBe(1);
    try {
      MinHashIndex.fromJSON({ format: 'other', permutations: 64, shingleSize: 3, entries: [] } as never);
      expect.unreachable();
    } catch (error) {
      expect((error as EnvHarnessError).code).toBe('IMPORT_INVALID');
    }
  });
});

// The first feature extraction, kept verbatim as the reference: it built every pointer string and
// normalised the instructions on every call. Signatures must not change (stored pool indexes hold them).
function referenceSignature(instructions: string, params: JsonValue): Uint32Array {
  const rng = createRng(['envharness/minhash', 1]);
  const xors: number[] = [];
  const muls: number[] = [];
  for (let i = 0; i < MINHASH_PERMUTATIONS; i++) {
    xors.push(rng.nextUint32());
    muls.push(rng.nextUint32() | 1);
  }
  const fmix = (h: number): number => {
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    return h >>> 0;
  };
  const hashText = (text: string): number => {
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    return fmix(h);
  };
  const words = normalizeWords(instructions).map(hashText);
  const out: number[] = [];
  if (words.length > 0 && words.length < SHINGLE_SIZE) {
    let h = 0;
    for (const w of words) h = fmix(Math.imul(h, 0x9e3779b1) ^ w);
    out.push(h);
  }
  for (let i = 0; i + SHINGLE_SIZE <= words.length; i++) {
    let h = 0;
    for (let k = 0; k < SHINGLE_SIZE; k++) h = fmix(Math.imul(h, 0x9e3779b1) ^ words[i + k]!);
    out.push(h);
  }
  const leaves = (value: JsonValue, pointer: string): void => {
    if (value !== null && typeof value === 'object') {
      if (Array.isArray(value)) value.forEach((item, i) => leaves(item, `${pointer}/${i}`));
      else for (const key of Object.keys(value).sort()) leaves(value[key]!, `${pointer}/${key}`);
      return;
    }
    out.push(hashText(`\u0000param${pointer}=${canonicalize(value)}`));
  };
  leaves(params, '');
  const signature = new Uint32Array(MINHASH_PERMUTATIONS);
  for (let i = 0; i < MINHASH_PERMUTATIONS; i++) {
    let min = 0xffffffff;
    for (const f of out) {
      let h = Math.imul(f ^ xors[i]!, muls[i]!);
      h ^= h >>> 15;
      h = Math.imul(h, 0x2c1b3c6d);
      h = (h ^ (h >>> 12)) >>> 0;
      if (h < min) min = h;
    }
    signature[i] = min;
  }
  return signature;
}

const jsonValue = arbitraryJson();

describe('minhash feature extraction', () => {
  test.prop([fc.string({ maxLength: 80 }), jsonValue], { numRuns: 500 })('gives the reference algorithm\'s signatures', (text, params) => {
    expect([...minhashText(text, params)]).toEqual([...referenceSignature(text, params)]);
    // Twice in a row: the memoised instruction shingles give the same signature.
    expect([...minhashText(text, params)]).toEqual([...referenceSignature(text, params)]);
  });

  // ASCII text takes a one-pass word scanner, anything else the Unicode regexes: both must agree with the reference.
  const mixedText = fc.array(fc.oneof(fc.constantFrom(' ', '\t', '\n', '\u0000', '-', 'A', 'z', '9', 'É', 'ß', '\u00a0', '\u2003', '٣', '😀'), fc.string({ unit: 'binary', maxLength: 4 })), { maxLength: 30 }).map((parts) => parts.join(''));
  test.prop([mixedText, jsonValue], { numRuns: 500 })('gives the reference algorithm\'s signatures for ASCII controls, Unicode letters, digits and spaces', (text, params) => {
    expect([...minhashText(text, params)]).toEqual([...referenceSignature(text, params)]);
  });

  // Integer leaves and array positions are hashed digit by digit below 2^31, through String above: the edges.
  const edgeNumber = fc.constantFrom(0, -0, 1, -1, 9, 10, 99, 100, 2147483647, -2147483647, 2147483648, -2147483648, 4294967296, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1e21, -1e21, 1.5, -0.5, 5e-7);
  test.prop([fc.array(edgeNumber, { maxLength: 12 })], { numRuns: 200 })('gives the reference algorithm\'s signatures for integer edges and long arrays', (numbers) => {
    expect([...minhashText('What is it?', { numbers })]).toEqual([...referenceSignature('What is it?', { numbers })]);
  });

  it('gives the reference algorithm\'s signatures for retail tasks of every template and level', () => {
    for (const template of retailTemplates) {
      for (let level = 1; level <= template.levels.length; level++) {
        const task = instantiateTask(template, { level, seed: level, index: 3 });
        expect([...minhashTask(task)]).toEqual([...referenceSignature(task.spec.instructions, task.params)]);
      }
    }
  });
});

describe('minhash signatures in WebAssembly', () => {
  it('are available on the Node versions the package supports', () => {
    expect(simdSignatureOfFeatures(new Int32Array(1), 1)).toBeInstanceOf(Uint32Array);
  });

  test.prop([fc.array(fc.integer({ min: -0x80000000, max: 0x7fffffff }), { maxLength: 300 })], { numRuns: 300 })(
    'equal the JavaScript loop on any features (none included)',
    (features) => {
      const hashes = Int32Array.from(features);
      const js = new Uint32Array(MINHASH_PERMUTATIONS);
      signatureOfFeatures(hashes, hashes.length, js, 0);
      expect(Array.from(simdSignatureOfFeatures(hashes, hashes.length)!)).toEqual(Array.from(js));
    },
  );

  it('equal the JavaScript loop on extreme features, and give 0xffffffff minima for none', () => {
    const hashes = Int32Array.from([0, -1, 0x7fffffff, -0x80000000, 1, 0x2c1b3c6d]);
    for (let n = 0; n <= hashes.length; n++) {
      const js = new Uint32Array(MINHASH_PERMUTATIONS);
      signatureOfFeatures(hashes, n, js, 0);
      expect(Array.from(simdSignatureOfFeatures(hashes, n)!)).toEqual(Array.from(js));
    }
    expect(new Set(simdSignatureOfFeatures(hashes, 0))).toEqual(new Set([0xffffffff]));
  });

  it('leave a text with more features than the module holds to the JavaScript loop, with the same result', () => {
    const words = Array.from({ length: 20_000 }, (_, i) => `w${i}`);
    const long = minhashText(words.join(' '));
    const shorter = minhashText(words.slice(0, 19_999).join(' '));
    expect(estimateSimilarity(long, shorter)).toBeGreaterThan(0.9);
    expect(simdSignatureOfFeatures(new Int32Array(20_000), 20_000)).toBeUndefined();
  });
});
