/** The domain contract: a simulated world with state, tools, policy, a simulated user and templates. */
import type { ZodType } from 'zod';
import type { Action, Feedback, FeedbackCode, Observation, Severity, ToolOutcome } from './episode.js';
import type { JsonObject, JsonValue } from './json.js';
import type { Rng } from './rng.js';
import type { BatchRequest } from './batch.js';
import type { Task, Template } from './template.js';
import type { Agent } from './agent.js';
import type { Finding } from './problem.js';
import type { Store } from './store.js';

/** What a tool run may use besides the state. */
export interface ToolContext {
  /** Seeded per (episode seed, call index): tools that need randomness use this, never Math.random. */
  rng: Rng;
  task: Task;
}

/** A tool as authored with `defineTool`. */
export interface Tool<S = unknown, A = JsonObject> {
  name: string;
  description: string;
  effect: 'read' | 'write';
  args: ZodType<A>;
  run(state: S, args: A, ctx: ToolContext): ToolOutcome;
}

/** One recorded step as policy rules and acceptance checks see it. */
export interface TraceEntry {
  step: number;
  action: Action;
  observation: Observation;
  /** Whether the tool ran and succeeded (tool actions only). */
  ok?: boolean;
  /** For message actions: the simulated user's reply. */
  userReply?: UserTurn;
}

export interface PolicyContext<S> {
  state: S;
  trace: readonly TraceEntry[];
  task: Task;
}

/**
 * A machine-checked policy rule, evaluated before a tool action runs. A violation returns a message;
 * `block` rules also stop the tool from running (the action is refused and state is unchanged).
 */
export interface PolicyRule<S = unknown> {
  id: string;
  description: string;
  severity: Severity;
  block?: boolean;
  /** A violation, or undefined when the call is allowed. */
  check(action: Action & { type: 'tool' }, ctx: PolicyContext<S>): Finding | undefined;
}

/** The simulated user's turn. */
export interface UserTurn {
  text: string;
  /** The user explicitly confirmed the action just proposed. */
  confirms?: boolean;
  /** The user considers the conversation over. */
  done?: boolean;
}

/** A deterministic simulated user holding the task's hidden goal. */
export interface SimulatedUser {
  /** The user's first message. */
  opening(): string;
  respond(agentText: string, ctx: { trace: readonly TraceEntry[] }): UserTurn;
  /** Recorded exchanges for replay (LLM users record prompts and completions). */
  record?(): JsonValue;
}

/** A domain-specific acceptance check beyond final state / outputs / ordering. */
export interface AcceptanceCheck<S = unknown> {
  id: string;
  /** A failed criterion, or undefined when it holds. */
  check(ctx: PolicyContext<S> & { referenceState: S }): Finding | undefined;
}

/**
 * A domain. State is whatever the domain likes, but it must support cheap forks: `createState` may
 * be slow (it builds a world), `fork` must be O(1) or O(changes), and `hashState` must be stable.
 */
export interface Domain<S = unknown> {
  name: string;
  version: number;
  description?: string;
  /** Builds the world for a task's `initialState`. May be cached by the runtime per distinct input. */
  createState(initialState: JsonValue): S;
  /** A working copy whose changes do not touch `state` (copy-on-write or journaled). */
  fork(state: S): S;
  /** Stable digest of the whole state. */
  hashState(state: S): string;
  /** JSON export of the whole state (for inspection, export and interoperability). */
  exportState(state: S): JsonValue;
  tools: readonly Tool<S, any>[];
  policy?: { text: string; rules: readonly PolicyRule<S>[] };
  acceptance?: readonly AcceptanceCheck<S>[];
  /** The simulated user for a task, when the task has one. */
  createUser?(task: Task, rng: Rng): SimulatedUser;
  templates: readonly Template<any>[];
  /** Normalisation for required-output matching (default: lower-case, strip commas). */
  normalizeOutput?(text: string): string;
  /**
   * The domain's frozen regression set, shipped as a recipe: batch requests (split `regression`) that
   * regenerate it byte-identically, and the sha256 over its sorted task ids that locks it. The harness
   * generates it into a store that lacks it and refuses to continue if the digest differs.
   */
  regressionSet?: { batches: BatchRequest[]; digest: string };
  /** What shared code (CLI, harness) would otherwise decide by the domain's name. */
  defaults?: DomainDefaults;
  /**
   * Scripted baseline agents that know this domain, by agent name (`rule-based`). Built only on the
   * observation contract: a baseline never sees the task or its reference solution. The built-in
   * `rule-based` agent delegates to `baselines['rule-based']` of the episode's domain.
   */
  baselines?: Readonly<Record<string, AgentFactory>>;
  /**
   * Re-attaches what tasks need but the store does not hold (e.g. a world imported from files), from
   * what the domain's own importers recorded with `store.setMeta`. `harness.initialize()` calls it for
   * every registered domain; it must be idempotent and must not change task data.
   */
  restore?(store: Pick<Store, 'getMeta'>): Promise<void>;
  /** CLI subcommands the domain contributes (`envharness import tau-bench`). */
  commands?: readonly DomainCommand[];
  /**
   * The world after a recorded episode in the domain's own export formats (`envharness episode state
   * --format F`); the first format is the default. Without it the CLI replays the episode and prints
   * `exportState` as JSON.
   */
  episodeState?: {
    formats: readonly string[];
    export(request: EpisodeStateRequest): Promise<{ text: string; summary: Record<string, string> }>;
  };
  /**
   * Feedback the domain adds after each valid action (e.g. faults its own services injected and the
   * agent's recovery from them), after the runtime's own. Must be deterministic in the episode so far.
   */
  feedback?(ctx: { action: Action; trace: readonly TraceEntry[]; state: S; task: Task }): Feedback[];
  /**
   * Pictures of an episode's pages for the report's spot checks (`envharness report --screenshots N`):
   * PNGs of the first page and of the page after the last action. Domains with pages declare it (web,
   * through real Chromium); `env` locates the browser.
   */
  screenshots?(request: { task: Task; actions: readonly Action[]; env: Readonly<Record<string, string | undefined>> }): Promise<Array<{ label: string; png: Uint8Array }>>;
  /** Domain-specific fields of the episode's outcome, put in the last step's `info.report`. */
  report?(ctx: PolicyContext<S> & { referenceState: S }): JsonObject;
  /**
   * Where text a third party controls can appear in tool outputs (an order note, a product
   * description, an email body). The safety layer (`envharness/domains/safety`) places attacker text
   * only there; a domain without it cannot be wrapped.
   */
  injectionPoints?: readonly InjectionPoint[];
  /**
   * What the domain adds to an evaluation (`envharness eval`): a summary computed from the eval's
   * outcomes of its tasks, kept with the run and shown by eval, `runs compare` and the report (the
   * safety layer's attack success by kind × level).
   */
  evaluation?: DomainEvaluation;
}

/** One evaluated episode as `DomainEvaluation.summarize` sees it (the recorded outcome). */
export interface EvaluatedEpisode {
  taskId: string;
  seed: number;
  outcome: number;
  excluded: boolean;
  /** The domain's `report` of the episode. */
  report?: JsonValue;
}

/** A domain's evaluation summary; computed once per eval, from the domain's own outcomes. */
export interface DomainEvaluation {
  /** `ctx.runner` plays any further episodes the summary needs (the safety layer's clean runs). */
  summarize(episodes: readonly EvaluatedEpisode[], ctx: { getTask(id: string): Promise<Task | undefined>; agent: Agent; runner: EpisodeRunner }): Promise<EvaluationSummary | undefined>;
  /**
   * Two runs' summaries of this domain as one (`runs compare`): A, B and the change, cell by cell.
   * Without it, or when the data is not the domain's, the two are shown one after the other.
   */
  compare?(a: EvaluationSummary, b: EvaluationSummary): EvaluationSummary | undefined;
}

/** One unrecorded episode an `EpisodeRunner` played: its grade and its transcript. */
export interface PlayedEpisode {
  /** The task's grade in [0, 1] (the outcome, without shaping). */
  outcome: number;
  /** Lost to a simulator error or an unrecoverable injected fault: not to be counted. */
  excluded: boolean;
  /** Feedback counts by code over the episode. */
  feedback: Partial<Record<FeedbackCode, number>>;
  trace: readonly TraceEntry[];
}

/**
 * The runtime's episode loop as a contract, for a domain that plays episodes of its own (the safety
 * layer runs each attacked task's user task clean): domains import only core, so the caller passes it
 * in. The runtime's `episodeRunner` implements it.
 */
export interface EpisodeRunner {
  play(domain: Domain<any>, task: Task, agent: Agent, seed: number): Promise<PlayedEpisode>;
}

/** Tables any front end can show: the CLI as text, the report as a heatmap (cells with a `score`). */
export interface EvaluationSummary {
  title: string;
  note: string;
  tables: SummaryTable[];
  /** The machine-readable rows (`--json`). */
  data: JsonValue;
}

export interface SummaryTable {
  title: string;
  /** Header of the label column, then one per cell. */
  columns: string[];
  rows: Array<{ label: string; cells: SummaryCell[] }>;
}

export interface SummaryCell {
  text: string;
  /** 0–1, higher is better: the report colours the cell red to green; null leaves it plain. */
  score: number | null;
  /** Detail shown on hover (intervals, counts). */
  title?: string;
}

/**
 * A free-text field of a tool's successful output. `pointer` (RFC 6901) names the field inside the
 * output object; its parent must be an object, and the field is added when the output lacks it (a
 * note the record may or may not carry), or, with `line`, extended by one line. Placing text there
 * never changes the state.
 */
export interface InjectionPoint {
  tool: string;
  pointer: string;
  /** What the field is, as a reader of the output would see it ("a note left on the order"). */
  description: string;
  /**
   * Set when the field is a text the output already carries (a page's accessibility tree): the text
   * then goes in as one more line of it, in this shape, `{text}` standing for the attacker's text
   * (newlines in it become spaces). Unset, the field is set to the text.
   */
  line?: string;
}

/** Per-domain defaults read by shared code. */
export interface DomainDefaults {
  /**
   * Trained on when no domain is named (`envharness train` without `--domain`). When no domain sets
   * it, every domain with templates is trained on.
   */
  train?: boolean;
}

/** Builds one baseline agent; options are the agent's own (e.g. `{ faultRetries: 2 }`). */
export type AgentFactory = (options?: Readonly<Record<string, unknown>>) => Agent;

/** What `episodeState.export` is asked for. */
export interface EpisodeStateRequest {
  store: Store;
  episodeId: string;
  format: string;
  /** A data folder given on the command line (`--data`) instead of the one recorded at import. */
  data?: string;
}

/** One option of a `DomainCommand`, as the CLI declares it. */
export interface DomainCommandOption {
  /** Flags in the CLI's syntax: `--data <dir>`, `-k, --k <n>`, `--json`. */
  flags: string;
  description: string;
  default?: string | number | boolean;
  required?: boolean;
  /** `int`: an integer of at least `min`; `repeatable`: every occurrence collected into a list. */
  parse?: { int: { min: number } } | 'repeatable';
}

/**
 * A CLI subcommand contributed by a domain, as plain data the CLI turns into a command: the domain
 * never sees the CLI framework, only `CommandContext`.
 */
export interface DomainCommand {
  /** Words under `envharness`, e.g. `['import', 'tau-bench']`; existing parents are reused. */
  path: readonly [string, ...string[]];
  description: string;
  /** Descriptions for parent commands the CLI has to create, by name. */
  parents?: Readonly<Record<string, string>>;
  options: readonly DomainCommandOption[];
  /** Runs the command with the parsed options (camel-cased flag names, as the CLI parses them). */
  run(options: Record<string, unknown>, cli: CommandContext): Promise<void>;
}

/** What the CLI hands a domain command: the global flags, output and the CLI's own resolvers. */
export interface CommandContext {
  /** `--store` as given. */
  store: string;
  /** `--json`: print one JSON document with `printJson`. */
  json: boolean;
  env: Readonly<Record<string, string | undefined>>;
  openStore(): Promise<Store>;
  /** The agent `--agent NAME` names (built-ins and `openai`), as every CLI command resolves it. */
  agent(flags: { agent: string; baseUrl?: string | undefined; model?: string | undefined }): Promise<Agent>;
  out(text: string): void;
  err(text: string): void;
  printJson(value: unknown): void;
  table(rows: ReadonlyArray<Record<string, string | number>>): string;
  style: { bold(text: string): string; yellow(text: string): string };
  /** A progress bar on stderr (silent with `--json`). */
  progress(label: string): { update(done: number, total: number): void; stop(): void };
}

/** Feedback producers a domain may add per step. */
export type DomainFeedback = (ctx: { action: Action; trace: readonly TraceEntry[] }) => Feedback[];
