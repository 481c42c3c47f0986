/** Reads tau-bench's retail files from disk (the only file I/O of the retail domain). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { EnvHarnessError } from '../../core/index.js';
import type { RetailData } from './schema.js';
import type { TauBenchTask } from './tau-bench/actions.js';
import { createRetailWorld, type RetailWorld } from './world.js';

/**
 * Loads `users.json`, `orders.json` and `products.json` from tau-bench's retail data folder as a
 * world. Pass it to `createRetailDomain({ worlds: [world] })`; tasks then name it by
 * `{ "world": "tau-bench", "digest": world.digest }`.
 * @example
 * const world = loadTauBenchWorld('../shared/data/tau-bench-retail');
 * world.digest; // 'd991536b…', the sha256 tau-bench's own tools see for this database
 */
export function loadTauBenchWorld(dir: string): RetailWorld {
  // tau-bench's load_data builds its dict in this order: orders, products, users.
  const data: RetailData = {
    orders: readJson(dir, 'orders.json') as RetailData['orders'],
    products: readJson(dir, 'products.json') as RetailData['products'],
    users: readJson(dir, 'users.json') as RetailData['users'],
  };
  return createRetailWorld(data, { source: 'tau-bench' });
}

/** Reads `tasks_<split>.json` (tau-bench's TASKS_TRAIN / TASKS_DEV / TASKS_TEST converted to JSON). */
export function loadTauBenchTasks(dir: string, split: 'train' | 'dev' | 'test'): TauBenchTask[] {
  const file = `tasks_${split}.json`;
  const tasks = readJson(dir, file);
  if (!Array.isArray(tasks)) throw new EnvHarnessError('IMPORT_INVALID', `${path.join(dir, file)}: expected a JSON array of tasks`);
  tasks.forEach((task: unknown, index) => {
    const t = task as Partial<TauBenchTask> | null;
    if (typeof t !== 'object' || t === null || typeof t.user_id !== 'string' || !Array.isArray(t.actions)) {
      throw new EnvHarnessError('IMPORT_INVALID', `${path.join(dir, file)}: task ${index} needs user_id and actions`, {
        details: { pointer: `/${index}` },
      });
    }
  });
  return tasks as TauBenchTask[];
}

function readJson(dir: string, file: string): unknown {
  const full = path.join(dir, file);
  let text: string;
  try {
    text = readFileSync(full, 'utf8');
  } catch (error) {
    throw new EnvHarnessError('IMPORT_INVALID', `cannot read ${full}: ${(error as Error).message}; point --data at tau-bench's retail data folder`, {
      cause: error,
    });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new EnvHarnessError('IMPORT_INVALID', `${full} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}
