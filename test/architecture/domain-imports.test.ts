/**
 * Domains import only core: every relative import of a non-test file under `src/domains/<name>/` stays in
 * that folder or names `src/core/index.ts` (STYLE.md, "Dependency direction"). What a domain needs from the
 * runtime comes in through a core contract (`EpisodeRunner`), passed by the caller.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFile, parseSource, resolveSpecifier, sourceFiles, type ParsedFile } from './source.js';

const CORE = 'src/core/index.ts';

/**
 * Files that broke the rule before it was checked, for retail's owner to mend; the list may only shrink.
 * The tau-bench tools (import, eval, the LLM user, their CLI command) run episodes and read the report.
 */
const KNOWN = new Set([
  'src/domains/retail/dialogue.ts',
  'src/domains/retail/measure.ts',
  'src/domains/retail/tau-bench/cli.ts',
  'src/domains/retail/tau-bench/episode.ts',
  'src/domains/retail/tau-bench/evaluate.ts',
  'src/domains/retail/tau-bench/import.ts',
  'src/domains/retail/tau-bench/llm-user.ts',
]);

const isTestCode = (file: string): boolean => file.endsWith('.test.ts') || file.split('/').includes('testing');

/** The imports of a domain file that leave its domain folder for anything but core. */
function strayImports(parsed: ParsedFile): string[] {
  const folder = parsed.file.split('/').slice(0, 3).join('/');
  return parsed.imports
    .filter((i) => i.specifier.startsWith('.'))
    .flatMap((i) => {
      const target = resolveSpecifier(parsed.file, i.specifier) ?? path.posix.join(path.posix.dirname(parsed.file), i.specifier);
      return target === CORE || target.startsWith(`${folder}/`) ? [] : [`${parsed.file} imports ${i.specifier}`];
    });
}

describe('domains import only core', () => {
  it('no domain file imports another folder of src/ than core (known exceptions aside)', () => {
    const files = sourceFiles().filter((f) => f.startsWith('src/domains/') && !isTestCode(f));
    expect(files.length).toBeGreaterThan(50);
    const stray = files.filter((f) => !KNOWN.has(f)).flatMap((f) => strayImports(parseFile(f)));
    expect(stray).toEqual([]);
    // A known file that no longer strays leaves the list.
    expect([...KNOWN].filter((f) => strayImports(parseFile(f)).length === 0)).toEqual([]);
  });

  it('catches a planted runtime, agents or other-domain import, type-only too, but not core or its own folder', () => {
    const planted = parseSource(
      'src/domains/safety/planted.ts',
      [
        "import { z } from 'zod';",
        "import { canonicalize } from '../../core/index.js';",
        "import { renderAttack } from './attacks.js';",
        "import { runEpisode } from '../../runtime/index.js';",
        "import type { Curriculum } from '../../curriculum/index.js';",
        "import { sampleFromSchema } from '../../agents/schema-sample.js';",
        "export { retail } from '../retail/index.js';",
        "import { rngFor } from '../../core/hashing.js';",
      ].join('\n'),
    );
    expect(strayImports(planted)).toEqual([
      'src/domains/safety/planted.ts imports ../../runtime/index.js',
      'src/domains/safety/planted.ts imports ../../curriculum/index.js',
      'src/domains/safety/planted.ts imports ../../agents/schema-sample.js',
      'src/domains/safety/planted.ts imports ../retail/index.js',
      'src/domains/safety/planted.ts imports ../../core/hashing.js',
    ]);
  });
});
