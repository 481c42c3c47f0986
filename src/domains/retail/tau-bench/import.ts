/** importTauBench: tau-bench's retail database and task files as a world and versioned batches of EnvHarness tasks. */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import {
  computeTaskId,
  digest,
  DEFAULT_NEAR_DUPLICATE_THRESHOLD,
  EnvHarnessError,
  formatTemplateId,
  issuePointer,
  GATE_NAMES,
  SPLITS,
  type Action,
  type Batch,
  type BatchManifest,
  type GateName,
  type GateProblemCode,
  type GateResult,
  type GateVerdict,
  type GenerationLogEntry,
  type JsonValue,
  type LevelSpec,
  type Split,
  type Task,
} from '../../../core/index.js';
import { applyTauBenchActions, RESPOND_ACTION, toolsByName, type TauBenchTask } from './actions.js';
import { createRetailDomain, worldRef, type RetailDomain } from '../domain.js';
import { createRetailState } from '../state.js';
import { loadTauBenchWorld } from '../load.js';
import { type RetailWorld } from '../world.js';
import { checkTaskSchema } from '../../../generation/index.js';
import { createEpisode, createRuntimeCache, type RuntimeCache } from '../../../runtime/index.js';
import { createTauBenchDomain, type TauBenchUserGoal } from './domain.js';
import { tauBenchOutputSaid, type TauBenchParams } from './grade.js';
import { inferTauBenchLabels, TAU_BENCH_MAX_LEVEL } from './labels.js';

/** Recorded in every import manifest (`generatorVersion`); bump when the mapping changes. */
export const TAU_BENCH_IMPORTER_VERSION = 'envharness-import-tau-bench/2';
/** Version of the `retail/tau-bench-<set>` templates the importer writes. */
export const TAU_BENCH_TEMPLATE_VERSION = 1;
/** tau-bench's default `max_num_steps`: one step per agent action. */
export const TAU_BENCH_MAX_STEPS = 30;
/** The task files imported by default and their splits. */
export const DEFAULT_TAU_BENCH_TASK_FILES: ReadonlyArray<{ file: string; split: Split }> = [
  { file: 'tasks_train.json', split: 'dynamic' },
  { file: 'tasks_dev.json', split: 'regression' },
];

/** The gates an import runs: tau-bench's set is what it is, so only broken tasks are rejected. */
const IMPORT_GATES: ReadonlySet<GateName> = new Set<GateName>(['schema', 'exact_duplicate', 'oracle']);

/** One task file to import, and the split its tasks go to. */
export interface TauBenchTaskFile {
  /** Path, absolute or relative to `dir`. */
  file: string;
  split: Split;
}

export interface ImportTauBenchOptions {
  /** tau-bench's retail data folder: `users.json`, `orders.json`, `products.json`, task files. */
  dir: string;
  /** Default: `tasks_train.json` → dynamic, `tasks_dev.json` → regression. */
  tasks?: readonly TauBenchTaskFile[];
  /** A retail domain to register the world on (default: a new one). */
  retail?: RetailDomain;
  /** Ids already stored: those tasks are rejected as exact duplicates, as in generation. */
  existingIds?: ReadonlySet<string>;
}

/** One imported task file: a batch like any generated one. */
export interface ImportedTauBenchSet {
  file: string;
  /** `train` for `tasks_train.json`. */
  set: string;
  split: Split;
  template: string;
  /** sha256 of the file's bytes. */
  sourceDigest: string;
  batch: Batch;
}

export interface TauBenchImport {
  world: RetailWorld;
  /** The retail domain with the world registered, wrapped by `createTauBenchDomain` (no simulated user). */
  domain: RetailDomain;
  /** sha256 of the bytes of users.json, orders.json and products.json. */
  worldFiles: Record<string, string>;
  sets: ImportedTauBenchSet[];
}

const actionSchema = z.strictObject({ name: z.string().min(1), kwargs: z.record(z.string(), z.json()) });
const taskSchema = z.looseObject({
  user_id: z.string().min(1),
  instruction: z.string().min(1),
  actions: z.array(actionSchema),
  outputs: z.array(z.string()),
  annotator: z.union([z.string(), z.number(), z.null()]).optional(),
});

/**
 * Imports tau-bench's retail world and task files. Each tau-bench task becomes one EnvHarness task of
 * template `retail/tau-bench-<set>@1` whose reference solution is the gold actions, graded as
 * tau-bench grades; each file becomes one batch with a manifest (gates: schema, exact duplicates,
 * oracle replay). Pure in the files' contents: the same files give the same task ids and batches.
 * @example
 * const imported = importTauBench({ dir: '../shared/data/tau-bench-retail' });
 * for (const set of imported.sets) await store.saveBatch(set.batch);
 */
export function importTauBench(options: ImportTauBenchOptions): TauBenchImport {
  const dir = options.dir;
  if (!existsSync(dir)) {
    throw new EnvHarnessError('IMPORT_INVALID', `tau-bench data folder ${dir} does not exist; point --data at the folder holding users.json, orders.json, products.json and tasks_*.json`, {
      details: { pointer: '/dir' },
    });
  }
  const world = loadTauBenchWorld(dir);
  const worldFiles: Record<string, string> = {};
  for (const file of ['users.json', 'orders.json', 'products.json']) worldFiles[file] = sha256File(path.join(dir, file));
  const retail = options.retail ?? createRetailDomain();
  retail.addWorld(world);
  const domain = createTauBenchDomain(retail);
  const cache = createRuntimeCache(domain);
  const seen = new Set<string>(options.existingIds ?? []);
  const contents = new Map<string, { file: string; ref: string }>();
  const sets = (options.tasks ?? DEFAULT_TAU_BENCH_TASK_FILES).map((entry) => importFile(dir, entry, world, domain, cache, worldFiles, seen, contents));
  const templates = sets.map((s) => s.template);
  const twice = templates.find((t, i) => templates.indexOf(t) !== i);
  if (twice !== undefined) {
    throw new EnvHarnessError('PARAMS_INVALID', `two task files map to template ${twice}; import each file once`, { details: { pointer: '/tasks' } });
  }
  return { world, domain, worldFiles, sets };
}

/** `train` for `tasks_train.json`, `my-set` for `my set.json`. */
export function tauBenchSetName(file: string): string {
  const base = path.basename(file).replace(/\.json$/i, '').replace(/^tasks_/i, '');
  const name = base.toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^[-_]+|-+$/g, '');
  if (name === '') throw new EnvHarnessError('PARAMS_INVALID', `cannot name a task set after file ${file}; rename it, e.g. tasks_<name>.json`, { details: { pointer: '/tasks' } });
  return name;
}

/** The split a task file goes to by default: train → dynamic, dev → regression, test → heldout. */
export function defaultSplitFor(file: string): Split {
  const set = tauBenchSetName(file);
  return set === 'dev' ? 'regression' : set === 'test' ? 'heldout' : 'dynamic';
}

function importFile(
  dir: string,
  entry: TauBenchTaskFile,
  world: RetailWorld,
  domain: RetailDomain,
  cache: RuntimeCache<any>,
  worldFiles: Record<string, string>,
  seen: Set<string>,
  contents: Map<string, { file: string; ref: string }>,
): ImportedTauBenchSet {
  if (!(SPLITS as readonly string[]).includes(entry.split)) {
    throw new EnvHarnessError('PARAMS_INVALID', `split of ${entry.file} must be one of ${SPLITS.join(', ')}, got "${entry.split}"`, { details: { pointer: '/tasks' } });
  }
  const full = path.isAbsolute(entry.file) ? entry.file : path.join(dir, entry.file);
  const sourceDigest = sha256File(full);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(full, 'utf8'));
  } catch (error) {
    throw new EnvHarnessError('IMPORT_INVALID', `${full} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (!Array.isArray(raw)) throw new EnvHarnessError('IMPORT_INVALID', `${full}: expected a JSON array of tau-bench tasks`);

  const set = tauBenchSetName(full);
  const template = formatTemplateId({ domain: 'retail', name: `tau-bench-${set}`, version: TAU_BENCH_TEMPLATE_VERSION });
  const tools = toolsByName(domain.tools);
  const totals = new Map<GateName, GateResult>(GATE_NAMES.map((gate) => [gate, { gate, enabled: IMPORT_GATES.has(gate), checked: 0, passed: 0, rejected: 0 }]));
  const tasks: Task[] = [];
  const log: GenerationLogEntry[] = [];
  let trivial = 0;
  let refusedCalls = 0;

  const gate = (name: GateName, verdict: GateVerdict): GateVerdict => {
    const total = totals.get(name)!;
    total.checked++;
    if (verdict.ok) total.passed++;
    else total.rejected++;
    return verdict;
  };

  const file = path.basename(full);
  raw.forEach((item: unknown, index) => {
    // Every rejection is a Problem pointing into the task file (`/<index>`, or deeper where known), its
    // message (the log's reason) saying how to fix it.
    const reject = (name: GateName, code: GateProblemCode, pointer: string, verdict: Exclude<GateVerdict, { ok: true }>, taskId = '', level = 1): void => {
      const line: GenerationLogEntry = { batchId: '', index, taskId, template, level, accepted: false, gate: name, reason: verdict.reason, problem: { code, message: verdict.reason, pointer } };
      if (verdict.details !== undefined) line.details = verdict.details;
      log.push(line);
    };
    const parsed = taskSchema.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const pointer = issuePointer(issue, `/${index}`);
      const verdict = gate('schema', {
        ok: false,
        reason: `tau-bench task ${index}: ${issue.path.join('.') || 'task'}: ${issue.message}; fix ${file} at ${pointer} (tau-bench's own task files have this shape)`,
        details: { pointer },
      });
      return reject('schema', 'TASK_SCHEMA', pointer, verdict as Exclude<GateVerdict, { ok: true }>);
    }
    const source = parsed.data as unknown as TauBenchTask;
    const { task, refused, statedOutputs } = buildTask(source, { index, set, template, sourceDigest, world, tools });
    refusedCalls += refused.length;
    const schema = gate('schema', checkTaskSchema(task));
    if (!schema.ok) {
      // The file's task was well-formed: the task built from it is the importer's fault.
      const built = { ...schema, reason: `tau-bench task ${index} imports as an invalid EnvHarness task (${schema.reason}): the importer's mapping is wrong; report it with this task` };
      return reject('schema', 'TASK_SCHEMA', `/${index}`, built, task.id, task.level);
    }
    // Task ids include the index (tau-bench's task id), so a task repeated within one file gets a new id at
    // each occurrence and is kept: tau-bench scores every occurrence. The same task in another file (another
    // split) is still a duplicate: it would put one task in two splits.
    const content = digest(source);
    const first = contents.get(content);
    const inOtherFile = first !== undefined && first.file !== full;
    const repeatOf = first !== undefined && !inOtherFile ? first.ref : undefined;
    const duplicate = gate(
      'exact_duplicate',
      inOtherFile
        ? { ok: false, reason: `the same tau-bench task as ${first.ref}, imported into another split: one task in two splits trains on what it evaluates; remove it from one of the files`, details: { duplicateOf: first.ref } }
        : seen.has(task.id)
          ? { ok: false, reason: 'this task is already in the store: it was imported before, nothing to do', details: { duplicateOf: task.id } }
          : { ok: true },
    );
    if (first === undefined) contents.set(content, { file: full, ref: `${file}[${index}]` });
    if (!duplicate.ok) return reject('exact_duplicate', inOtherFile ? 'ALREADY_IN_POOL' : 'ALREADY_STORED', `/${index}`, duplicate, task.id, task.level);
    seen.add(task.id);
    const oracle = gate('oracle', replayGold(domain, cache, task));
    if (!oracle.ok) return reject('oracle', 'ORACLE_FAILED', `/${index}/actions`, oracle, task.id, task.level);
    const isTrivial = emptyTrajectoryScores(domain, cache, task);
    if (isTrivial) trivial++;
    tasks.push(task);
    const line: GenerationLogEntry = { batchId: '', index, taskId: task.id, template, level: task.level, accepted: true };
    if (isTrivial || refused.length > 0) line.details = { trivial: isTrivial, refusedGoldCalls: refused };
    if (repeatOf !== undefined) line.details = { ...(line.details as Record<string, JsonValue> | undefined), repeatOf };
    if (statedOutputs.length > 0) line.details = { ...(line.details as Record<string, JsonValue> | undefined), statedOutputs };
    log.push(line);
  });

  const byType: Record<string, number> = {};
  const byLevel: Record<string, number> = {};
  for (const task of tasks) {
    byType[task.taskType] = (byType[task.taskType] ?? 0) + 1;
    byLevel[String(task.level)] = (byLevel[String(task.level)] ?? 0) + 1;
  }
  const levels = [...new Set(tasks.map((t) => t.level))].sort((a, b) => a - b);
  const body: Omit<BatchManifest, 'id'> = {
    generatorVersion: TAU_BENCH_IMPORTER_VERSION,
    templates: [{ id: template, version: TAU_BENCH_TEMPLATE_VERSION, sourceDigest, weight: 1, taskType: 'tau-bench' }],
    seed: 0,
    split: entry.split,
    levels,
    parameterRanges: { [template]: Object.fromEntries(levels.map((level) => [String(level), LEVEL_SPECS[level - 1]!])) },
    requested: raw.length,
    accepted: tasks.length,
    rejected: raw.length - tasks.length,
    gates: [...totals.values()],
    nearDuplicateThreshold: DEFAULT_NEAR_DUPLICATE_THRESHOLD,
    reviewShare: 0,
    digest: digest(tasks.map((t) => t.id)),
    labels: {
      source: 'tau-bench',
      file: path.basename(full),
      set,
      world: world.digest,
      'sha256:users.json': worldFiles['users.json']!,
      'sha256:orders.json': worldFiles['orders.json']!,
      'sha256:products.json': worldFiles['products.json']!,
      gold_refused_calls: String(refusedCalls),
      non_trivial: `not enforced: ${trivial} of ${tasks.length} tasks already score 1 with the empty trajectory (their gold actions leave the database unchanged)`,
      near_duplicate: 'not enforced: tau-bench tasks are imported as they are',
    },
    counts: { byType: sortRecord(byType), byLevel: sortRecord(byLevel) },
  };
  const manifest: BatchManifest = { id: digest(body), ...body };
  for (const line of log) line.batchId = manifest.id;
  return { file: full, set, split: entry.split, template, sourceDigest, batch: { manifest, tasks, log } };
}

/** What each level means: the larger of the gold's write calls and the orders it touches. */
const LEVEL_SPECS: readonly LevelSpec[] = Array.from({ length: TAU_BENCH_MAX_LEVEL }, (_, i) => ({
  'max(writes, orders)': i + 1 < TAU_BENCH_MAX_LEVEL ? i + 1 : `>= ${TAU_BENCH_MAX_LEVEL}`,
}));

interface BuildContext {
  index: number;
  set: string;
  template: string;
  sourceDigest: string;
  world: RetailWorld;
  tools: ReturnType<typeof toolsByName>;
}

/**
 * One tau-bench task as an EnvHarness task. Gold calls the tools refuse are left out of the solution;
 * required outputs the gold messages do not state are stated in one added message (`statedOutputs`).
 */
function buildTask(source: TauBenchTask, ctx: BuildContext): { task: Task; refused: number[]; statedOutputs: string[] } {
  const labels = inferTauBenchLabels(source.actions, ctx.tools);
  // tau-bench's gold actions include calls its own tools refuse (e.g. insufficient gift-card balance);
  // they change nothing there, and a reference solution must not contain failing steps.
  const state = createRetailState(ctx.world);
  const outcomes = applyTauBenchActions(state, source.actions, ctx.tools);
  const refused: number[] = [];
  const solution: Action[] = [];
  source.actions.forEach((action, i) => {
    if (action.name === RESPOND_ACTION) {
      const content = action.kwargs['content'];
      solution.push({ type: 'message', text: typeof content === 'string' ? content : JSON.stringify(content ?? '') });
      return;
    }
    const outcome = outcomes[i];
    if (outcome !== undefined && !outcome.ok) {
      refused.push(i);
      return;
    }
    solution.push({ type: 'tool', tool: action.name, args: action.kwargs });
  });
  // tau-bench's gold actions never say the outputs a task requires (its reward asks for them in what the
  // agent tells the user), so a reference solution made of them alone scores 0. State the missing ones in
  // one message, before a transfer to a human (which ends the episode) or at the end. Tasks without outputs,
  // or whose gold messages already state them, keep the gold solution as it is (and their ids).
  const told = solution.flatMap((a) => (a.type === 'message' ? [a.text] : []));
  const statedOutputs = source.outputs.filter((output) => !tauBenchOutputSaid(output, told));
  if (statedOutputs.length > 0) {
    const transfer = solution.findIndex((a) => a.type === 'tool' && a.tool === 'transfer_to_human_agents');
    const message: Action = { type: 'message', text: `Here is what you asked for: ${statedOutputs.join('; ')}.` };
    solution.splice(transfer === -1 ? solution.length : transfer, 0, message);
  }
  solution.push({ type: 'finish' });
  const user: TauBenchUserGoal = { source: 'tau-bench', user_id: source.user_id, instruction: source.instruction };
  const params: TauBenchParams = { source: 'tau-bench', set: ctx.set, index: ctx.index, task: source };
  const tags = ['tau-bench', `tau-bench:${ctx.set}`, ...labels.tools.map((t) => `tool:${t}`), `writes:${labels.writes}`, `orders:${labels.orders}`];
  if (refused.length > 0) tags.push(`gold-refused:${refused.length}`);
  const body: Omit<Task, 'id'> = {
    template: ctx.template,
    domain: 'retail',
    taskType: labels.taskType,
    level: labels.level,
    params: params as unknown as JsonValue,
    spec: {
      instructions: `A customer contacts the online store's support (tau-bench retail, ${ctx.set} task ${ctx.index}). Help them within the policy.`,
      initialState: worldRef(ctx.world),
      budget: { steps: TAU_BENCH_MAX_STEPS, consecutiveErrors: TAU_BENCH_MAX_STEPS },
      acceptance: { finalState: true, outputs: [...source.outputs] },
      solution,
      user: user as unknown as JsonValue,
      tags,
    },
    origin: { seed: 0, index: ctx.index, templateDigest: ctx.sourceDigest },
  };
  return { task: { id: computeTaskId(body), ...body }, refused, statedOutputs };
}

/** The oracle gate of an import: the gold actions, played in an episode, must score 1. */
/** What to do when a task's own gold actions fail: they were written against tau-bench's database. */
const GOLD_FIX = "check the task's actions, and that users.json, orders.json and products.json are the tau-bench files its task file was written against";

function replayGold(domain: RetailDomain, cache: RuntimeCache<any>, task: Task): GateVerdict {
  try {
    const episode = createEpisode(domain, task, { faults: false, cache });
    episode.reset({ seed: 0 });
    let last;
    for (const action of task.spec.solution) {
      if (episode.status !== 'running') break;
      last = episode.step(action);
    }
    if (last === undefined || !last.terminated || last.info.outcome !== 1) {
      return { ok: false, reason: `the gold actions do not score 1 in an episode; ${GOLD_FIX}`, details: { outcome: last?.info.outcome ?? null, endReason: last?.info.endReason ?? null } };
    }
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `the gold actions cannot be played (${(error as Error).message}); ${GOLD_FIX}` };
  }
}

/** Whether finishing right away already scores 1 (recorded, not enforced). */
function emptyTrajectoryScores(domain: RetailDomain, cache: RuntimeCache<any>, task: Task): boolean {
  const episode = createEpisode(domain, task, { faults: false, cache });
  episode.reset({ seed: 0 });
  return episode.step({ type: 'finish' }).info.outcome === 1;
}

function sha256File(file: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new EnvHarnessError('IMPORT_INVALID', `cannot read ${file}: ${(error as Error).message}; point --data at tau-bench's retail data folder`, { cause: error });
  }
  return createHash('sha256').update(bytes).digest('hex');
}

function sortRecord(record: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of Object.keys(record).sort((a, b) => (/^\d+$/.test(a) && /^\d+$/.test(b) ? Number(a) - Number(b) : a < b ? -1 : 1))) out[key] = record[key]!;
  return out;
}
