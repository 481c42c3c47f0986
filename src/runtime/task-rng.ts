/** Per-task generators of the runtime, equal to core's `fastRng` of the same parts with one sha256 of a short string. */
import { fastRng, Rng, sha256Bytes } from '../core/index.js';

/**
 * `fastRng([taskId, ...rest])` where `rest` is written as its canonical JSON (`restJson`, starting with a
 * comma): a task id that JSON writes as it is (printable ASCII without quote or backslash, as every
 * generated id) is quoted by hand; any other id takes `fastRng` itself.
 */
function taskRng(taskId: string, restJson: string, parts: () => readonly unknown[]): Rng {
  for (let i = 0; i < taskId.length; i++) {
    const c = taskId.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return fastRng(parts());
  }
  const digest = sha256Bytes('["' + taskId + '"' + restJson + ']');
  // createRng's seed: the digest's first four big-endian words, never all zero.
  const view = new DataView(digest.buffer, digest.byteOffset, digest.byteLength);
  const a = view.getUint32(0);
  const b = view.getUint32(4);
  const c = view.getUint32(8);
  let d = view.getUint32(12);
  if ((a | b | c | d) === 0) d = 1;
  return new Rng([a, b, c, d]);
}

/** `fastRng([taskId, 'non_trivial'])`: the non-triviality gate's random trajectory. */
export function nonTrivialRng(taskId: string): Rng {
  return taskRng(taskId, ',"non_trivial"', () => [taskId, 'non_trivial']);
}

/** `fastRng([taskId, seed, 'user'])`: the simulated user of an episode reset with `seed` (a safe integer). */
export function userRng(taskId: string, seed: number): Rng {
  if (!Number.isSafeInteger(seed)) return fastRng([taskId, seed, 'user']);
  // A safe integer's canonical JSON is its decimal form (-0 is 0).
  return taskRng(taskId, ',' + (seed === 0 ? '0' : String(seed)) + ',"user"', () => [taskId, seed, 'user']);
}
