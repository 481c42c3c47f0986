/** Building tasks from templates in tests: a positional shorthand for src/generation's `instantiateTask`. */
import type { RegisteredTemplate, Task } from '../../core/index.js';
import { instantiateTask } from '../../generation/index.js';

/** Task `index` of `template` at `level` for `seed`, exactly as generation builds it. */
export function instantiate<P>(template: RegisteredTemplate<P>, level: number, seed: number, index = 0): Task {
  return instantiateTask(template, { level, seed, index });
}
