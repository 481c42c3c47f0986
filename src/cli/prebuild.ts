/** The build's last step (`npm run build`): dist/prebuilt, what later processes read instead of recomputing (src/harness/prebuilt.ts). */
import { builtinDomains } from '../builtins.js';
import type { RegisteredTemplate } from '../core/index.js';
import { createHarness } from '../harness/harness.js';
import { prebuiltDir, writeRegressionSet, writeTemplateDigests } from '../harness/prebuilt.js';
import { systemClock } from './clock.js';

/**
 * Writes the built-in templates' source digests (computed here, by probing) keyed by the compiled code,
 * and each built-in domain's regression set as generated into a fresh in-memory store.
 */
export async function writePrebuilt(dir: string | undefined = prebuiltDir()): Promise<void> {
  if (dir === undefined) throw new Error('writePrebuilt runs from the compiled package (dist/cli/prebuild.js)');
  const domains = builtinDomains();
  writeTemplateDigests(dir, domains.flatMap((d) => d.templates as RegisteredTemplate<any>[]));
  for (const domain of domains) {
    if (domain.regressionSet === undefined) continue;
    const harness = await createHarness({ clock: systemClock, store: ':memory:', domains: [domain], prebuilt: false });
    try {
      await harness.initialize();
      const [set] = await harness.installRegressionSets([domain.name]);
      if (set === undefined) throw new Error(`${domain.name}: no regression set was installed`);
      writeRegressionSet(dir, domain.name, set.batches);
    } finally {
      await harness.close();
    }
  }
}
