/** sha256 digests of canonical JSON: the identity of tasks, batches and snapshots. */
// node:crypto is pure computation, not I/O: the one node: import core allows (docs/design/001-core.md).
import { createHash } from 'node:crypto';
import { canonicalize } from './canonical-json.js';

/** Hex sha256 of a UTF-8 string. */
export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Hex sha256 of the RFC 8785 canonical JSON of a value. */
export function digest(value: unknown): string {
  return sha256(canonicalize(value));
}

/** Raw 32-byte sha256 of a UTF-8 string (for seed derivation). */
export function sha256Bytes(text: string): Uint8Array {
  return createHash('sha256').update(text, 'utf8').digest();
}
