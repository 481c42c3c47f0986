/** tau-bench task shapes and gold-action replay through the retail tools. */
import { EnvHarnessError, formatPointer, type JsonObject, type Tool, type ToolContext, type ToolOutcome } from '../../../core/index.js';
import type { RetailState } from '../state.js';

/** An action as tau-bench records it; `respond` is a message to the user, not a tool. */
export interface TauBenchAction {
  name: string;
  kwargs: JsonObject;
}

/** A tau-bench retail task (its Python task files converted to JSON). */
export interface TauBenchTask {
  user_id: string;
  instruction: string;
  actions: TauBenchAction[];
  outputs: string[];
  annotator?: string;
}

/** tau-bench's name for the message action. */
export const RESPOND_ACTION = 'respond';

/** The retail tools use neither randomness nor the task; replay outside an episode passes this. */
export const NO_CONTEXT: ToolContext = Object.freeze({
  get rng(): never {
    throw new EnvHarnessError('INTERNAL', 'this tool call has no episode context (no rng)');
  },
  get task(): never {
    throw new EnvHarnessError('INTERNAL', 'this tool call has no episode context (no task)');
  },
});

/**
 * Runs tau-bench actions on `state` (in place) through the tools, as tau-bench's `Env.step` would:
 * `respond` is skipped, arguments are checked by the tool's schema, an unknown tool changes nothing.
 * Returns one outcome per action (`undefined` for `respond`). In hot loops pass the tools as a
 * name-to-tool Map (`toolsByName(domain.tools)`) to skip building it per call.
 */
export function applyTauBenchActions(
  state: RetailState,
  actions: readonly TauBenchAction[],
  tools: readonly Tool<RetailState, any>[] | ReadonlyMap<string, Tool<RetailState, any>>,
  ctx: ToolContext = NO_CONTEXT,
): Array<ToolOutcome | undefined> {
  const byName = isToolMap(tools) ? tools : toolsByName(tools);
  return actions.map((action) => {
    if (action.name === RESPOND_ACTION) return undefined;
    const tool = byName.get(action.name);
    if (tool === undefined) return { ok: false, error: { code: 'INVALID_ACTION', message: `Unknown action ${action.name}` } };
    const parsed = tool.args.safeParse(action.kwargs);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return {
        ok: false,
        // A root-level issue keeps the pointer tau-bench replays have always recorded ('/').
        error: { code: 'INVALID_ACTION', message: issue.message, pointer: formatPointer(issue.path) || '/' },
      };
    }
    return tool.run(state, parsed.data, ctx);
  });
}

/** Tools by name. */
export function toolsByName(tools: readonly Tool<RetailState, any>[]): ReadonlyMap<string, Tool<RetailState, any>> {
  return new Map(tools.map((tool) => [tool.name, tool]));
}

function isToolMap(
  tools: readonly Tool<RetailState, any>[] | ReadonlyMap<string, Tool<RetailState, any>>,
): tools is ReadonlyMap<string, Tool<RetailState, any>> {
  return !Array.isArray(tools);
}
