/** JSON pointers (RFC 6901): escaping, formatting and parsing, zod issues as pointers, and whether a pointer resolves in a value. */

/** One reference token, escaped (RFC 6901: `~` → `~0`, then `/` → `~1`). */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Formats a path as a JSON pointer: `['args', 'order_id']` → `/args/order_id`. */
export function formatPointer(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) out += '/' + escapePointerToken(String(part));
  return out;
}

/** What `issuePath` reads of a validation issue (zod's `$ZodIssue` has this shape). */
export interface PathIssue {
  code?: string;
  path: readonly PropertyKey[];
  /** `unrecognized_keys` issues: the unknown keys. */
  keys?: readonly string[];
}

/** Where a zod issue is: its path, plus the first unknown key for `unrecognized_keys` (the key exists in the input). */
export function issuePath(issue: PathIssue): PropertyKey[] {
  const path = [...issue.path];
  if (issue.code === 'unrecognized_keys' && issue.keys !== undefined && issue.keys.length > 0) path.push(issue.keys[0]!);
  return path;
}

/**
 * A zod issue as an escaped JSON pointer under `prefix` (already a pointer): `{ path: ['a/b'] }` under
 * `/params` → `/params/a~1b`. The one conversion of validation issues to pointers.
 */
export function issuePointer(issue: PathIssue, prefix = ''): string {
  return prefix + formatPointer(issuePath(issue));
}

/** Splits a JSON pointer into its unescaped reference tokens. */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Whether `pointer` names a value that exists inside `root` (own properties and array indexes only). */
export function resolvesIn(root: unknown, pointer: string): boolean {
  let current: unknown = root;
  for (const token of parsePointer(pointer)) {
    if (current === null || typeof current !== 'object') return false;
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) >= current.length) return false;
      current = current[Number(token)];
    } else {
      if (!Object.prototype.hasOwnProperty.call(current, token)) return false;
      current = (current as Record<string, unknown>)[token];
    }
  }
  return true;
}

/**
 * The longest prefix of `path` that exists in `root`, as a pointer: a missing argument is reported at
 * the object that lacks it, so that every pointer we hand out resolves in the input.
 */
export function closestPointer(root: unknown, path: readonly PropertyKey[]): string {
  let current: unknown = root;
  const kept: PropertyKey[] = [];
  for (const part of path) {
    if (current === null || typeof current !== 'object') break;
    const key = String(part);
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(key) || Number(key) >= current.length) break;
      current = current[Number(key)];
    } else {
      if (!Object.prototype.hasOwnProperty.call(current, key)) break;
      current = (current as Record<string, unknown>)[key];
    }
    kept.push(part);
  }
  return formatPointer(kept);
}
