/** fast-check arbitraries shared by the generation tests. */
import { fc } from '@fast-check/vitest';
import type { JsonValue } from '../../core/index.js';

/** Any JSON value, small and nested; object keys from `key` (default: short strings). */
export function jsonValue(options: { key?: fc.Arbitrary<string>; unit?: 'grapheme' | 'binary' } = {}): fc.Arbitrary<JsonValue> {
  const key = options.key ?? fc.string({ maxLength: 4 });
  return fc.letrec((tie) => ({
    json: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer(),
      fc.string({ unit: options.unit ?? 'grapheme' }),
      fc.array(tie('json'), { maxLength: 4 }),
      fc.dictionary(key, tie('json'), { maxKeys: 5 }),
    ),
  })).json as fc.Arbitrary<JsonValue>;
}
