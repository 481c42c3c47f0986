/**
 * The web domain's Chromium half: the same oracle episodes played by the pure simulation and in real
 * Chromium through the Playwright driver, measured in the same run, and the ratio between them.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { BrowserPage } from '../src/domains/web/browser/browser-page.js';
import { findChromium, launchChromium } from '../src/domains/web/browser/chromium.js';
import { oracleEpisodes, taskEpisode, type Episode } from '../src/domains/web/browser/episodes.js';
import { WEB_TEMPLATES } from '../src/domains/web/templates.js';
import { instantiateTask } from '../src/generation/index.js';
import { step } from '../src/domains/web/page.js';
import { hashWebState } from '../src/domains/web/state.js';
import { fmt, measure, median, type BenchSection } from './lib.js';

function playSim(episode: Episode): number {
  let page = episode.start;
  for (const action of episode.actions) page = step(page, action).page;
  return page.tick;
}

export async function run(): Promise<BenchSection[]> {
  // Every template's reference solution at one level each (levels 1..5 spread over the templates), plus the fixture episodes.
  const episodes = [
    ...WEB_TEMPLATES.map((t, i) => taskEpisode(instantiateTask(t, { level: 1 + ((i * 2 + 3) % 5), seed: 20_261_202, index: 0 }))),
    ...oracleEpisodes(),
  ];
  const steps = episodes.reduce((n, e) => n + e.actions.length, 0);
  const load = loadavg().map((x) => x.toFixed(2)).join(' / ');
  const sim = measure((n) => {
    for (let i = 0; i < n; i++) playSim(episodes[i % episodes.length]!);
  }, { runs: 5, targetMs: 300 });
  const simSteps = (sim.opsPerSec * steps) / episodes.length;
  const section: BenchSection = {
    title: 'Web domain: simulated page vs real Chromium (same oracle episodes, same run)',
    description:
      `${episodes.length} oracle episodes (${steps} actions: the reference solution of each of the ${WEB_TEMPLATES.length} templates at one level, and ${episodes.length - WEB_TEMPLATES.length} fixture episodes) played by the pure simulation (\`step\`) and in Debian's Chromium through the Playwright driver ` +
      '(a new tab per episode, every action judged by the browser and run through real DOM events; no accessibility snapshots). Median of 2 rounds (after a warm-up round) for Chromium, 5 for the simulation.',
    rows: [],
    notes: [`Load average (1/5/15 min) when this section started: ${load} on a machine shared by other jobs; wall-clock rates under load are lower bounds, the ratio is from one run.`],
  };
  const executablePath = findChromium(process.env);
  if (executablePath === undefined) {
    section.rows.push({ side: 'simulation', 'episodes/s': fmt(sim.opsPerSec), 'steps/s': fmt(simSteps), 'ms/episode': (1000 / sim.opsPerSec).toFixed(4) });
    section.notes!.push('Chromium half not measured: no Chromium on this machine (apt-get install -y chromium, or set CHROMIUM_PATH).');
    return [section];
  }
  const browser = await launchChromium({ executablePath });
  const rates: number[] = [];
  let mismatches = 0;
  try {
    for (let round = 0; round < 3; round++) {
      const t0 = performance.now();
      for (const episode of episodes) {
        const live = await BrowserPage.open(browser.context, episode.start);
        for (const action of episode.actions) await live.act(action);
        let page = episode.start;
        for (const action of episode.actions) page = step(page, action).page;
        if (hashWebState({ page: live.current }) !== hashWebState({ page })) mismatches++;
        await live.close();
      }
      // Round 0 warms the browser up.
      if (round > 0) rates.push((episodes.length * 1000) / (performance.now() - t0));
    }
  } finally {
    await browser.close();
  }
  const chromium = median(rates);
  const chromiumSteps = (chromium * steps) / episodes.length;
  section.rows.push(
    { side: 'simulation', 'episodes/s': fmt(sim.opsPerSec), 'steps/s': fmt(simSteps), 'ms/episode': (1000 / sim.opsPerSec).toFixed(4) },
    { side: 'Chromium (Playwright)', 'episodes/s': fmt(chromium), 'steps/s': fmt(chromiumSteps), 'ms/episode': (1000 / chromium).toFixed(1) },
    { side: 'ratio (simulation ÷ Chromium)', 'episodes/s': `${fmt(sim.opsPerSec / chromium)}x`, 'steps/s': `${fmt(simSteps / chromiumSteps)}x`, 'ms/episode': '' },
  );
  section.notes!.push(`Target ratio ≥ 1,000x: ${sim.opsPerSec / chromium >= 1000 ? 'met' : 'NOT met'} (${fmt(sim.opsPerSec / chromium)}x). Final store hashes that differed between the two: ${mismatches} of ${episodes.length * 3}.`);
  return [section];
}
