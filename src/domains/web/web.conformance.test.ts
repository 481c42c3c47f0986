import { describe, expect, it } from 'vitest';
import { checkLevelsDiffer, describeDomain } from '../../../test/conformance/domain.js';
import { createWebBaselineAgent, web } from './index.js';
// Every template at every level and the planted-mistake checks. The baseline-per-level check plays
// 640 episodes, so it runs below with its own timeout instead of describeDomain's default one.
describeDomain(web, { baselines: [] });

describe('web levels', () => {
  it('really differ, and the scripted baseline does not do better at higher levels', () => {
    expect(checkLevelsDiffer(web, { baselines: [createWebBaselineAgent()], levelSamples: 16 })).toEqual([]);
  }, 600_000);
});
