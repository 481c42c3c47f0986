/** The CLI's lazy command table: what --help lists is what the command modules register. */
import { describe, expect, it } from 'vitest';
import { buildProgram, COMMAND_MODULES, commandName, main } from './main.js';
import type { Io } from './output.js';

const quiet: Io = { out: () => {}, err: () => {}, isTTY: false };

describe('envharness command table', () => {
  it('names every top-level command with the description its module registers', async () => {
    const program = await buildProgram(quiet, {});
    const registered = Object.fromEntries(program.commands.map((c) => [c.name(), c.description()]));
    const listed = Object.fromEntries(COMMAND_MODULES.flatMap((m) => Object.entries(m.commands)));
    expect(listed).toEqual(registered);
  });

  it('finds the command in argv past global options, and through `help <command>`', () => {
    expect(commandName(['node', 'envharness', '--store', 'train', 'eval', '--k', '2'])).toBe('eval');
    expect(commandName(['node', 'envharness', '--json', '--templates', 'a.yaml', 'runs', 'list'])).toBe('runs');
    expect(commandName(['node', 'envharness', 'help', 'serve'])).toBe('serve');
    expect(commandName(['node', 'envharness', '--help'])).toBeUndefined();
  });

  it('--help lists every command without loading any command module', async () => {
    const out: string[] = [];
    const code = await main(['node', 'envharness', '--help'], { out: (s) => out.push(s), err: () => {}, isTTY: false }, {});
    expect(code).toBe(0);
    for (const m of COMMAND_MODULES) for (const name of Object.keys(m.commands)) expect(out.join('')).toContain(name);
  });

  it('`<command> --help` shows the options of that command', async () => {
    const out: string[] = [];
    expect(await main(['node', 'envharness', 'eval', '--help'], { out: (s) => out.push(s), err: () => {}, isTTY: false }, {})).toBe(0);
    expect(out.join('')).toContain('--split <split>');
  });
});
