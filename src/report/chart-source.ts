/** Finds and reads chart.js's UMD build, which the report inlines so that it needs no network. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { EnvHarnessError } from '../core/index.js';

/** The source of `chart.umd.min.js` (chart.js's `exports` map hides it, so resolve the main file's folder). */
export function loadChartJsSource(): string {
  try {
    const main = createRequire(import.meta.url).resolve('chart.js');
    return readFileSync(join(dirname(main), 'chart.umd.min.js'), 'utf8');
  } catch (error) {
    throw new EnvHarnessError('INTERNAL', `cannot read chart.js's UMD build (chart.umd.min.js next to the chart.js package's main file): ${(error as Error).message}; reinstall with \`npm ci\``, { cause: error });
  }
}

/** Makes text safe inside an inline <script> element: no `</script` and no `<!--` can end or confuse it. */
export function escapeInlineScript(source: string): string {
  return source.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** JSON for a `<script type="application/json">` element: `<` becomes \u003c, so no tag can appear in it. */
export function inlineJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}
