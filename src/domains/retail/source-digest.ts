/** The digest of retail's source files: what every retail template's output depends on (its contentDigest). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { digest } from '../../core/index.js';

/**
 * sha256 over the text of every file of the retail domain's source folder (`src/domains/retail`, tests
 * excluded), by path relative to it, line endings normalised. Read from the TypeScript sources whether
 * this module runs from them (tsx) or from the compiled `dist/` (the package ships both), so the digest
 * does not depend on the toolchain; any change to intents, samplers, phrasing, worlds or the reference
 * solver changes it. Undefined when the sources are not beside the package (a bundle): the template
 * digest then falls back to probing the templates' output.
 */
export function retailSourceDigest(moduleUrl: string = import.meta.url): string | undefined {
  const dir = retailSourceDir(path.dirname(fileURLToPath(moduleUrl)));
  if (dir === undefined) return undefined;
  const files = listFiles(dir).filter((f) => !f.endsWith('.test.ts')).sort();
  return digest(files.map((f) => [f, readFileSync(path.join(dir, f), 'utf8').replace(/\r\n/g, '\n')]));
}

/** `<package root>/src/domains/retail`, found by walking up from this module to the folder with package.json. */
function retailSourceDir(from: string): string | undefined {
  let dir = from;
  for (let i = 0; i < 8; i++) {
    if (existsSync(path.join(dir, 'package.json'))) {
      const src = path.join(dir, 'src', 'domains', 'retail');
      return existsSync(src) ? src : undefined;
    }
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
  return undefined;
}

function listFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) out.push(...listFiles(dir, rel));
    else if (entry.isFile()) out.push(rel);
  }
  return out;
}
