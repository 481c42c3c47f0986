/** Slices: (domain, task type) pairs with level bounds, keyed `domain/taskType`. */
import { EnvHarnessError, type Template } from '../core/index.js';
import type { Slice } from './types.js';

/** The key of a slice: `domain/taskType`. */
export function sliceKey(domain: string, taskType: string): string {
  return `${domain}/${taskType}`;
}

/**
 * One slice per (domain, task type) of the given templates, in first-seen order. Levels run from 1 to the
 * most levels any of its templates declares (generation picks, per level, the templates that declare it).
 * Held-out templates are skipped: they are never trained on.
 * @example
 * const curriculum = createCurriculum({ strategy: 'threshold', slices: slicesFromTemplates(retail.templates) });
 */
export function slicesFromTemplates(
  templates: readonly Pick<Template<unknown>, 'domain' | 'taskType' | 'levels' | 'heldout'>[],
): Slice[] {
  const byKey = new Map<string, Slice>();
  for (const template of templates) {
    if (template.heldout) continue;
    const key = sliceKey(template.domain, template.taskType);
    const slice = byKey.get(key);
    if (slice) slice.maxLevel = Math.max(slice.maxLevel, template.levels.length);
    else byKey.set(key, { domain: template.domain, taskType: template.taskType, minLevel: 1, maxLevel: template.levels.length });
  }
  return [...byKey.values()];
}

/** Checks slices (unique keys, integer bounds) and returns their keys in order; throws CONFIG_INVALID. */
export function checkSlices(slices: readonly Slice[]): string[] {
  if (slices.length === 0) {
    throw new EnvHarnessError('CONFIG_INVALID', 'a curriculum needs at least one slice; pass `slices`', {
      details: { pointer: '/slices' },
    });
  }
  const keys: string[] = [];
  const seen = new Set<string>();
  slices.forEach((slice, i) => {
    const key = sliceKey(slice.domain, slice.taskType);
    const fail = (message: string): never => {
      throw new EnvHarnessError('CONFIG_INVALID', `slice ${key}: ${message}`, { details: { pointer: `/slices/${i}` } });
    };
    if (seen.has(key)) fail('declared twice');
    if (!Number.isInteger(slice.minLevel) || !Number.isInteger(slice.maxLevel) || slice.minLevel > slice.maxLevel) {
      fail(`levels must be integers with minLevel <= maxLevel, got [${slice.minLevel}, ${slice.maxLevel}]`);
    }
    if (slice.initialLevel !== undefined) {
      if (!Number.isInteger(slice.initialLevel) || slice.initialLevel < slice.minLevel || slice.initialLevel > slice.maxLevel) {
        fail(`initialLevel ${slice.initialLevel} is outside [${slice.minLevel}, ${slice.maxLevel}]`);
      }
    }
    seen.add(key);
    keys.push(key);
  });
  return keys;
}
