/**
 * MinHash minima four permutations at a time: a 223-byte WebAssembly module (SIMD, assembled below from
 * its opcodes) that computes exactly what minhash.ts's JavaScript loop computes. A signature is 64
 * permutations × every feature: a math/chain-sum task's (15 features, extraction included) took 2.7-3.5 µs
 * of CPU with the loop and 1.4-1.7 µs with the module (one thread, medians of 5 alternating runs of 45k
 * tasks, three runs, 2-core host at load 7-9).
 *
 * The permutation of feature `x` for permutation `i` is, as in the JavaScript,
 *   h = (x ^ XOR[i]) * MUL[i];  h ^= h >>> 15;  h *= 0x2c1b3c6d;  h ^= h >>> 12
 * in 32-bit unsigned arithmetic, and the signature's entry `i` is the unsigned minimum of `h` over the
 * features (0xffffffff when there are none). Where WebAssembly SIMD is missing, `createSimdSignature`
 * returns undefined and the JavaScript loop stays in use; a test compares both on random features.
 */

/** Byte offsets in the module's one 64 KiB page: the permutation tables, the output, then the features. */
interface Layout {
  xor: number;
  mul: number;
  out: number;
  features: number;
}

/** Computes signatures from features written into its memory. */
export interface SimdSignature {
  /** The most features one call takes (the rest of the page). */
  readonly capacity: number;
  /** Where to write the features (as int32) before `run`. */
  readonly features: Int32Array;
  /** The signature `run` writes (unsigned 32-bit minima), valid until the next `run`. */
  readonly out: Uint32Array;
  /** The signature of the first `n` features of `features` (n <= capacity) into `out`. */
  run(n: number): void;
}

const PAGE = 65_536;

/** The little of the WebAssembly JS API used here (the compiler's libs for Node leave it out). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: { memory: { buffer: ArrayBuffer }; signature: (n: number) => void } };
}

/**
 * The module for `permutations` (a multiple of 4) and its tables, or undefined where WebAssembly SIMD is
 * not available. `xor` and `mul` are the permutations' constants, as minhash.ts draws them.
 */
export function createSimdSignature(xor: Int32Array, mul: Int32Array): SimdSignature | undefined {
  const permutations = xor.length;
  const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (permutations % 4 !== 0 || mul.length !== permutations || wasm === undefined) return undefined;
  const layout: Layout = { xor: 0, mul: permutations * 4, out: permutations * 8, features: permutations * 12 };
  let exports: InstanceType<WasmApi['Instance']>['exports'];
  try {
    exports = new wasm.Instance(new wasm.Module(assemble(permutations, layout))).exports;
  } catch {
    return undefined; // no SIMD in this engine: the JavaScript loop computes the same
  }
  const buffer = exports.memory.buffer;
  new Int32Array(buffer, layout.xor, permutations).set(xor);
  new Int32Array(buffer, layout.mul, permutations).set(mul);
  const capacity = (PAGE - layout.features) / 4;
  return {
    capacity,
    features: new Int32Array(buffer, layout.features, capacity),
    out: new Uint32Array(buffer, layout.out, permutations),
    run: exports.signature,
  };
}

// ---- the module, opcode by opcode (WebAssembly core spec 2.0, SIMD: the 0xfd prefix) ----

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

const vector = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const section = (id: number, bytes: number[]): number[] => [id, ...uleb(bytes.length), ...bytes];
const name = (text: string): number[] => vector([...text].map((c) => [c.charCodeAt(0)]));

const I32 = 0x7f;
const V128 = 0x7b;
const op = {
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  end: [0x0b],
  brIf: (depth: number) => [0x0d, ...uleb(depth)],
  get: (local: number) => [0x20, ...uleb(local)],
  set: (local: number) => [0x21, ...uleb(local)],
  tee: (local: number) => [0x22, ...uleb(local)],
  i32Load: (offset: number) => [0x28, 2, ...uleb(offset)],
  i32Const: (value: number) => [0x41, ...sleb(value | 0)],
  i32GeU: [0x4f],
  i32LtU: [0x49],
  i32Add: [0x6a],
  i32Shl: [0x74],
  simd: (code: number) => [0xfd, ...uleb(code)],
};
const v128Load = (offset: number) => [...op.simd(0x00), 4, ...uleb(offset)];
const v128Store = (offset: number) => [...op.simd(0x0b), 4, ...uleb(offset)];
const v128AllOnes = [...op.simd(0x0c), ...new Array<number>(16).fill(0xff)];
const i32x4Splat = op.simd(0x11);
const v128Xor = op.simd(0x51);
const i32x4ShrU = op.simd(0xad);
const i32x4Mul = op.simd(0xb5);
const i32x4MinU = op.simd(0xb7);

/** `signature(n)`: for each group of four permutations, the minima over features [0, n) into `out`. */
function assemble(permutations: number, at: Layout): Uint8Array {
  // Locals: 0 n (the parameter), 1 p (byte offset of the permutation group), 2 f (feature address),
  // 3 end (past the last feature), 4 xor, 5 mul, 6 min, 7 h (v128).
  const [N, P, F, END, XOR, MUL, MIN, H] = [0, 1, 2, 3, 4, 5, 6, 7];
  const locals = vector([
    [...uleb(3), I32],
    [...uleb(4), V128],
  ]);
  const code = [
    ...op.get(N), ...op.i32Const(2), ...op.i32Shl, ...op.i32Const(at.features), ...op.i32Add, ...op.set(END),
    ...op.i32Const(0), ...op.set(P),
    ...op.loop, // each group of four permutations
    ...op.get(P), ...v128Load(at.xor), ...op.set(XOR),
    ...op.get(P), ...v128Load(at.mul), ...op.set(MUL),
    ...v128AllOnes, ...op.set(MIN),
    ...op.i32Const(at.features), ...op.set(F),
    ...op.block,
    ...op.get(F), ...op.get(END), ...op.i32GeU, ...op.brIf(0), // no features: the minima stay all ones
    ...op.loop, // each feature
    ...op.get(F), ...op.i32Load(0), ...i32x4Splat, ...op.get(XOR), ...v128Xor, ...op.get(MUL), ...i32x4Mul, // h = (x ^ xor) * mul
    ...op.tee(H), ...op.get(H), ...op.i32Const(15), ...i32x4ShrU, ...v128Xor, // h ^= h >>> 15
    ...op.i32Const(0x2c1b3c6d), ...i32x4Splat, ...i32x4Mul, // h *= 0x2c1b3c6d
    ...op.tee(H), ...op.get(H), ...op.i32Const(12), ...i32x4ShrU, ...v128Xor, // h ^= h >>> 12
    ...op.get(MIN), ...i32x4MinU, ...op.set(MIN),
    ...op.get(F), ...op.i32Const(4), ...op.i32Add, ...op.tee(F), ...op.get(END), ...op.i32LtU, ...op.brIf(0),
    ...op.end,
    ...op.end,
    ...op.get(P), ...op.get(MIN), ...v128Store(at.out),
    ...op.get(P), ...op.i32Const(16), ...op.i32Add, ...op.tee(P), ...op.i32Const(permutations * 4), ...op.i32LtU, ...op.brIf(0),
    ...op.end,
    ...op.end,
  ];
  const body = [...locals, ...code];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
    ...section(1, vector([[0x60, ...vector([[I32]]), ...vector([])]])), // type 0: (i32) -> ()
    ...section(3, vector([[0]])), // function 0 has type 0
    ...section(5, vector([[0x00, 1]])), // one memory of one page
    ...section(7, vector([[...name('memory'), 0x02, 0], [...name('signature'), 0x00, 0]])), // exports
    ...section(10, vector([[...uleb(body.length), ...body]])), // code
  ]);
}
