/** The template registry: every template by `domain/name@version`, with the latest version by `domain/name`. */
import { EnvHarnessError, formatTemplateId, parseTemplateId } from '../core/index.js';
import type { RegisteredTemplate } from '../core/index.js';

/** Templates by id; `get('domain/name')` gives the latest version. */
export interface TemplateRegistry {
  /** Adds a template; the same `id@version` twice throws `REGISTRATION_CONFLICT`. */
  register(template: RegisteredTemplate<any>): void;
  /** The template `domain/name@version`, or the latest version of `domain/name`. */
  get(id: string): RegisteredTemplate<any>;
  has(id: string): boolean;
  /** Every template, sorted by `domain/name` and then by version. */
  list(): RegisteredTemplate<any>[];
}

/**
 * Creates a registry, optionally pre-filled.
 * @example
 * const registry = createTemplateRegistry([addTemplate]);
 * registry.get('math/add');   // latest version
 */
export function createTemplateRegistry(templates: readonly RegisteredTemplate<any>[] = []): TemplateRegistry {
  // name (`domain/name`) -> version -> template
  const byName = new Map<string, Map<number, RegisteredTemplate<any>>>();

  function register(template: RegisteredTemplate<any>): void {
    const id = formatTemplateId({ domain: template.domain, name: template.name, version: template.version });
    // `in`, not the value: reading a template's digest computes it (defineTemplate), which registering must not.
    if (template.id !== id || !('sourceDigest' in template)) {
      throw new EnvHarnessError(
        'PARAMS_INVALID',
        `template ${template.id} does not match its declaration (${id}); create templates with defineTemplate`,
        { details: { id: template.id } },
      );
    }
    const name = `${template.domain}/${template.name}`;
    let versions = byName.get(name);
    if (versions === undefined) {
      versions = new Map();
      byName.set(name, versions);
    }
    const existing = versions.get(template.version);
    if (existing !== undefined) {
      const hint = existing.sourceDigest === template.sourceDigest
        ? 'it is already registered'
        : 'a different template has the same id; bump the version of the changed one';
      throw new EnvHarnessError('REGISTRATION_CONFLICT', `template ${id} is registered twice: ${hint}`, {
        details: { id },
      });
    }
    versions.set(template.version, template);
  }

  function get(id: string): RegisteredTemplate<any> {
    const ref = parseTemplateId(id, { versionOptional: true });
    const name = `${ref.domain}/${ref.name}`;
    const versions = byName.get(name);
    if (versions === undefined) {
      const known = [...byName.keys()].filter((n) => n.startsWith(`${ref.domain}/`)).sort();
      const hint = known.length > 0
        ? `known templates of ${ref.domain}: ${known.join(', ')}`
        : `no templates are registered in domain ${ref.domain}; known domains: ${knownDomains().join(', ') || '(none)'}`;
      throw new EnvHarnessError('TEMPLATE_NOT_FOUND', `no template ${id}; ${hint}`, { details: { id, known } });
    }
    if (ref.version === undefined) return versions.get(Math.max(...versions.keys()))!;
    const template = versions.get(ref.version);
    if (template === undefined) {
      const known = [...versions.keys()].sort((a, b) => a - b);
      throw new EnvHarnessError('VERSION_NOT_FOUND', `no template ${id}; known versions: ${known.join(', ')}`, {
        details: { id, known },
      });
    }
    return template;
  }

  function knownDomains(): string[] {
    return [...new Set([...byName.keys()].map((n) => n.slice(0, n.indexOf('/'))))].sort();
  }

  for (const template of templates) register(template);

  return {
    register,
    get,
    has(id) {
      try {
        get(id);
        return true;
      } catch {
        return false;
      }
    },
    list() {
      return [...byName.keys()]
        .sort()
        .flatMap((name) => [...byName.get(name)!.values()].sort((a, b) => a.version - b.version));
    },
  };
}
