/** Where tau-bench's retail data is for tests, and what its reference says (shared by the retail and interop suites). */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** `TAU_BENCH_DATA`, or `shared/data/tau-bench-retail` beside the clone (where CI puts it). */
export const TAU_BENCH_DATA_DIR = process.env.TAU_BENCH_DATA ?? path.resolve(repoRoot, '../shared/data/tau-bench-retail');

/** How to get the data, for the skip message and the failure CI prints. */
export const TAU_BENCH_DATA_HINT =
  `tau-bench retail data not found at ${TAU_BENCH_DATA_DIR}: put the project's shared/ folder beside the clone (shared/data/tau-bench-retail) or set TAU_BENCH_DATA to a folder holding users.json, orders.json, products.json, tasks_train.json, tasks_dev.json and gold_final_states.json (tau-bench's retail data, https://github.com/sierra-research/tau-bench)`;

/**
 * True when the suites that replay tau-bench's data must skip: the data is absent and the run does
 * not require it. CI sets ENVHARNESS_REQUIRE_DATA=1 (in .ci/run), so there a missing folder fails the
 * run instead of skipping it.
 */
export function skipWithoutTauBenchData(): boolean {
  if (existsSync(TAU_BENCH_DATA_DIR)) return false;
  if (process.env.ENVHARNESS_REQUIRE_DATA === '1') throw new Error(`${TAU_BENCH_DATA_HINT} (ENVHARNESS_REQUIRE_DATA=1 forbids skipping)`);
  console.warn(`skipping: ${TAU_BENCH_DATA_HINT}`);
  return true;
}

/** tau-bench's 16 retail tools, written out independently of the implementation under test. */
export const TAU_BENCH_TOOL_NAMES = [
  'calculate',
  'cancel_pending_order',
  'exchange_delivered_order_items',
  'find_user_id_by_email',
  'find_user_id_by_name_zip',
  'get_order_details',
  'get_product_details',
  'get_user_details',
  'list_all_product_types',
  'modify_pending_order_address',
  'modify_pending_order_items',
  'modify_pending_order_payment',
  'modify_user_address',
  'return_delivered_order_items',
  'think',
  'transfer_to_human_agents',
];

/** The shape of `gold_final_states.json`. */
export interface TauBenchGold {
  initial_sha256: string;
  train: Array<{ index: number; sha256: string }>;
  dev: Array<{ index: number; sha256: string }>;
}
