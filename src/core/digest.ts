/** sha256 digests of canonical JSON: the identity of tasks, batches and snapshots. */
// node:crypto is pure computation, not I/O: the one node: import core allows (docs/design/001-core.md).
// One-shot `hash` (Node >= 20.12) skips the Hash object that createHash builds per call.
import { hash } from 'node:crypto';
import { canonicalSha256 } from './canonical-json.js';

/** Hex sha256 of a UTF-8 string. */
export function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}

/** Hex sha256 of the RFC 8785 canonical JSON of a value. */
export function digest(value: unknown): string {
  return canonicalSha256(value);
}

/** Raw 32-byte sha256 of a UTF-8 string (for seed derivation). */
export function sha256Bytes(text: string): Uint8Array {
  return hash('sha256', text, 'buffer');
}
