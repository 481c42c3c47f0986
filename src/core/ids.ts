/** Template ids `<domain>/<name>@<version>`: one parser and one formatter, inverses of each other. */
import { EnvHarnessError } from './errors.js';

export interface TemplateRef {
  domain: string;
  name: string;
  version: number;
}

const NAME = /^[a-z0-9][a-z0-9_-]*$/;
const ID = /^([a-z0-9][a-z0-9_-]*)\/([a-z0-9][a-z0-9_-]*)@([1-9][0-9]*)$/;

export function formatTemplateId(ref: TemplateRef): string {
  if (!NAME.test(ref.domain) || !NAME.test(ref.name) || !Number.isInteger(ref.version) || ref.version < 1) {
    throw new EnvHarnessError(
      'PARAMS_INVALID',
      `invalid template reference ${JSON.stringify(ref)}: domain and name are lower-case kebab/snake words, version an integer >= 1`,
    );
  }
  return `${ref.domain}/${ref.name}@${ref.version}`;
}

/** Parses `domain/name@version`; `domain/name` (no version) gives version undefined. */
export function parseTemplateId(id: string): TemplateRef;
export function parseTemplateId(id: string, options: { versionOptional: true }): Omit<TemplateRef, 'version'> & { version?: number };
export function parseTemplateId(id: string, options?: { versionOptional: true }): Omit<TemplateRef, 'version'> & { version?: number } {
  const m = ID.exec(id);
  if (m) return { domain: m[1]!, name: m[2]!, version: Number(m[3]) };
  if (options?.versionOptional) {
    const parts = id.split('/');
    if (parts.length === 2 && NAME.test(parts[0]!) && NAME.test(parts[1]!)) return { domain: parts[0]!, name: parts[1]! };
  }
  throw new EnvHarnessError(
    'PARAMS_INVALID',
    `invalid template id "${id}": expected <domain>/<name>@<version>, e.g. shop/refund@1`,
    { details: { id } },
  );
}
