/** Defenses a run can turn on to compare, and their short names for metrics. */
/** Defenses a run can turn on to compare (all off by default). */
export interface Defense {
  /** Wrap placed text in `<<untrusted-data>>` markers; the policy says text inside is data, never instructions. */
  delimit?: boolean;
  /** Spotlighting by datamarking: spaces in placed text become `^`; the policy says marked text is data. */
  spotlight?: boolean;
  /** Offer only the tools the user task's reference solution uses (`constraints.allowedTools`). */
  toolFilter?: boolean;
}

/** The defense's short name for metrics: `none`, or the defenses on, joined with `+`. */
export function defenseName(defense: Defense = {}): string {
  const on = (['delimit', 'spotlight', 'toolFilter'] as const).filter((d) => defense[d] === true);
  return on.length === 0 ? 'none' : on.join('+');
}
