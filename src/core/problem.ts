/** The one shape of "a problem with this input": a code, a message saying what to fix, and where. */

/**
 * A problem found by a check: tool-call errors (`ToolOutcome`), observation errors, feedback, action
 * validation (`validateAction`) and declarative-template issues all have this shape. `pointer` is an
 * RFC 6901 JSON pointer into the checked input (`issuePointer` turns a zod issue into one).
 */
export interface Problem<C extends string = string> {
  code: C;
  message: string;
  pointer?: string;
}
