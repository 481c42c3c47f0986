/** template + level + seed + index -> Task: the pure heart of generation. */
import { EnvHarnessError, issuePointer } from '../core/index.js';
import type { BuildContext, JsonValue, RegisteredTemplate, Task, TaskSpec } from '../core/index.js';
import { fastTaskId, rngFor, taskIdAndBody } from '../core/index.js';
import { fastParamsParser, UNSURE } from './params-fast.js';

/** Where a task sits in a generation run: its level, the run's seed and the candidate index. */
export interface InstantiateOptions {
  level: number;
  seed: number;
  index: number;
}

/**
 * Builds task `index` of `template` at `level` for `seed`. Pure: the same inputs give a deep-equal
 * task. Throws `PARAMS_INVALID` for a level out of range or sampled params the template rejects.
 * @example
 * const task = instantiateTask(registry.get('math/add@1'), { level: 2, seed: 42, index: 0 });
 */
export function instantiateTask<P>(template: RegisteredTemplate<P>, options: InstantiateOptions): Task {
  const task = buildTask(template, options);
  task.id = fastTaskId(task);
  return task;
}

/**
 * `instantiateTask`, plus the task's stored body (`taskBody(task)`), written with its id: what a batch
 * hands to the store.
 */
export function instantiateTaskWithBody<P>(template: RegisteredTemplate<P>, options: InstantiateOptions): { task: Task; body: string } {
  const task = buildTask(template, options);
  const { id, body } = taskIdAndBody(task);
  task.id = id;
  return { task, body };
}

/** The task without its id. */
function buildTask<P>(template: RegisteredTemplate<P>, options: InstantiateOptions): Task {
  const { level, seed, index } = options;
  const levelSpec = template.levels[level - 1];
  if (!Number.isInteger(level) || levelSpec === undefined) {
    throw new EnvHarnessError(
      'PARAMS_INVALID',
      `level ${level} is out of range for template ${template.id}: valid levels are 1..${template.levels.length}`,
      { details: { pointer: '/level', template: template.id, level } },
    );
  }
  if (!Number.isSafeInteger(seed)) {
    throw new EnvHarnessError('PARAMS_INVALID', `seed must be an integer, got ${seed}`, { details: { pointer: '/seed' } });
  }
  if (!Number.isSafeInteger(index) || index < 0) {
    throw new EnvHarnessError('PARAMS_INVALID', `index must be an integer >= 0, got ${index}`, {
      details: { pointer: '/index' },
    });
  }
  // Equal to createRng([seed, template.id, index]) (tested), minus the generic canonicaliser.
  const rng = rngFor(seed, template.id, index);
  const sampled = template.sample(rng, level, levelSpec);
  // The schema's plain-function form gives zod's data for params it certainly accepts; zod answers the rest.
  const fast = fastParamsParser(template.params)?.(sampled) ?? UNSURE;
  const parsed = fast !== UNSURE ? { success: true as const, data: fast as P } : template.params.safeParse(sampled);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const pointer = issuePointer(issue, '/params');
    throw new EnvHarnessError(
      'PARAMS_INVALID',
      `template ${template.id} level ${level} sampled invalid params at ${pointer}: ${issue.message}; fix the template's sample() or its params schema`,
      { details: { pointer, template: template.id, level, seed, index } },
    );
  }
  const params = parsed.data;
  const ctx: BuildContext = { rng, level, levelSpec };
  const built = template.build(params, ctx);
  const solution = template.solve(params, built, ctx);
  // `{ ...built, solution }`, the same members in the same order: V8 adds a member after a spread on a slow
  // path (~0.4 µs per task), Object.assign onto a new object does not. An own `__proto__` (JSON-made) would
  // be assigned as the prototype, so such a spec takes the spread.
  const spec: TaskSpec = Object.hasOwn(built, '__proto__') ? { ...built, solution } : Object.assign({}, built, { solution });
  const task: Task = {
    id: '',
    template: template.id,
    domain: template.domain,
    taskType: template.taskType,
    level,
    params: params as JsonValue,
    spec,
    origin: { seed, index, templateDigest: template.sourceDigest },
  };
  return task;
}
