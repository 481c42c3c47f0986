/** The built-in domains, wired explicitly (importing a domain registers nothing). */
import type { Domain } from './core/index.js';
import { math } from './domains/math/index.js';

export function builtinDomains(): Domain<any>[] {
  return [math];
}
