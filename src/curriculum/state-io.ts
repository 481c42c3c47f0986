/** Reading curriculum state back from JSON, with IMPORT_INVALID errors that name the bad field. */
import { EnvHarnessError, type JsonValue } from '../core/index.js';

export function importInvalid(pointer: string, message: string): never {
  throw new EnvHarnessError('IMPORT_INVALID', `curriculum state ${pointer}: ${message}`, { details: { pointer } });
}

export function asObject(value: JsonValue | undefined, pointer: string): { [key: string]: JsonValue } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) importInvalid(pointer, 'expected an object');
  return value;
}

export function asArray(value: JsonValue | undefined, pointer: string, length?: number): JsonValue[] {
  if (!Array.isArray(value)) importInvalid(pointer, 'expected an array');
  if (length !== undefined && value.length !== length) importInvalid(pointer, `expected ${length} items, got ${value.length}`);
  return value;
}

export function asNumber(value: JsonValue | undefined, pointer: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) importInvalid(pointer, 'expected a finite number');
  return value;
}

export function asNumbers(value: JsonValue | undefined, pointer: string, length?: number): number[] {
  const items = asArray(value, pointer, length);
  return items.map((x, i) => asNumber(x, `${pointer}/${i}`));
}

export function asString(value: JsonValue | undefined, pointer: string): string {
  if (typeof value !== 'string') importInvalid(pointer, 'expected a string');
  return value;
}

export function asBoolean(value: JsonValue | undefined, pointer: string): boolean {
  if (typeof value !== 'boolean') importInvalid(pointer, 'expected a boolean');
  return value;
}
