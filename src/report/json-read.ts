/** Tolerant readers for JSON stored by other parts (run events, summaries): bad shapes read as absent. */
import type { JsonValue } from '../core/index.js';

export type JsonRecord = { [key: string]: JsonValue | undefined };

export function asRecord(value: JsonValue | undefined): JsonRecord | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonRecord) : undefined;
}

export function asNumber(value: JsonValue | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function asString(value: JsonValue | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asList(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value : [];
}

/** A `{ key: number }` object, dropping entries that are not finite numbers. */
export function asNumberMap(value: JsonValue | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  const record = asRecord(value);
  if (record === undefined) return out;
  for (const [key, v] of Object.entries(record)) {
    const n = asNumber(v);
    if (n !== undefined) out[key] = n;
  }
  return out;
}

export function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Rounds for display and evidence (4 decimals), keeping integers as they are. */
export function round(value: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
