/** The one shape of "a problem with this input": a code, a message saying what to fix, and where. */

/**
 * A problem found by a check: tool-call errors (`ToolOutcome`), observation errors, feedback, action
 * validation (`validateAction`), declarative-template issues, and what policy rules, acceptance checks
 * and `template.validate` may return all have this shape. `pointer` is an
 * RFC 6901 JSON pointer into the checked input (`issuePointer` turns a zod issue into one).
 */
export interface Problem<C extends string = string> {
  code: C;
  message: string;
  pointer?: string;
}

/**
 * What a policy rule or acceptance check returns: undefined when it holds, else a `Problem` (or, the
 * older form, its message alone: both are accepted and recorded as before).
 */
export type Finding = string | Problem;

