/** Finding and launching Debian's Chromium through playwright-core (never `playwright install`). */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { EnvHarnessError } from '../../../core/index.js';

/** Flags that keep a headless Chromium quiet and offline (STACK.md gotcha 10). */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/**
 * The Chromium executable: `CHROMIUM_PATH` when set (and present), else `chromium` or
 * `chromium-browser` on `PATH`; undefined when there is none. `env` is passed in (domains read no
 * `process.env`).
 */
export function findChromium(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const explicit = env.CHROMIUM_PATH;
  if (explicit !== undefined && explicit !== '') return existsSync(explicit) ? explicit : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    for (const name of ['chromium', 'chromium-browser']) {
      const path = join(dir, name);
      if (existsSync(path)) return path;
    }
  }
  return undefined;
}

/** A running Chromium with one persistent context on a throwaway profile. */
export interface Browser {
  context: BrowserContext;
  /** Closes the browser and deletes its profile folder. */
  close(): Promise<void>;
}

export interface LaunchOptions {
  /** The executable (see `findChromium`). */
  executablePath: string;
  /** Default true; false opens a window (needs a display). */
  headless?: boolean;
  viewport?: { width: number; height: number };
}

/**
 * Launches Chromium with a persistent context on a fresh profile folder (what STACK.md verified on
 * this machine). playwright-core loads only here, so importing the web domain never pulls it in.
 * @example
 * const browser = await launchChromium({ executablePath: findChromium(process.env)! });
 * try { const page = await browser.context.newPage(); } finally { await browser.close(); }
 */
export async function launchChromium(options: LaunchOptions): Promise<Browser> {
  let playwright: typeof import('playwright-core');
  try {
    playwright = await import('playwright-core');
  } catch (error) {
    throw new EnvHarnessError('CONFIG_INVALID', 'the web domain drives Chromium with the npm package playwright-core, which is not installed (it is a dependency of envharness: reinstall it, or run npm install playwright-core@1.65.1)', { cause: error, details: { pointer: '/playwright-core' } });
  }
  const profile = mkdtempSync(join(tmpdir(), 'envharness-web-chromium-'));
  let context: BrowserContext;
  try {
    context = await playwright.chromium.launchPersistentContext(profile, {
      executablePath: options.executablePath,
      headless: options.headless ?? true,
      viewport: options.viewport ?? { width: 1280, height: 800 },
      args: [...CHROMIUM_ARGS],
    });
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw new EnvHarnessError('CONFIG_INVALID', `could not launch Chromium at ${options.executablePath}: ${(error as Error).message.split('\n')[0]}; install Debian's chromium (apt-get install -y chromium) or set CHROMIUM_PATH`, { cause: error, details: { pointer: '/env/CHROMIUM_PATH' } });
  }
  return {
    context,
    async close() {
      try {
        await context.close();
      } finally {
        rmSync(profile, { recursive: true, force: true });
      }
    },
  };
}

/** A launch failure's message when there is no Chromium at all. */
export function noChromiumError(): EnvHarnessError {
  return new EnvHarnessError('CONFIG_INVALID', 'no Chromium found: install Debian\'s chromium (apt-get install -y chromium) or set CHROMIUM_PATH to the executable', { details: { pointer: '/env/CHROMIUM_PATH' } });
}
