/** Wilson score intervals for success rates (the curriculum's, the reports' and the safety layer's). */

/** The two-sided 95% normal quantile. */
export const Z95 = 1.959963984540054;

/**
 * The Wilson score interval of `successes` out of `n` (successes may be fractional for partial credit).
 * Returns [0, 1] when n is 0.
 */
export function wilsonInterval(successes: number, n: number, z: number = Z95): { low: number; high: number } {
  if (!(n > 0)) return { low: 0, high: 1 };
  const p = Math.min(1, Math.max(0, successes / n));
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z / denom) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}
