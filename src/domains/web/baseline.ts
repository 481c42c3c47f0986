/**
 * The web domain's scripted baseline (`web-scripted`): it reads only observations (the goal in the reset
 * text, then each accessibility tree) and knows the plain labels plus the two commonest synonyms of each.
 * Its weak spots are the harder perturbations: the rarest synonyms, menus and tabs it never opens, late
 * elements it waits for only briefly, wizards (A/B variant), and form contents lost after a session timeout.
 */
import type { Action, Agent, AgentEpisode, JsonObject, Observation } from '../../core/index.js';
import { SYNONYMS } from './perturbation.js';

interface Line {
  bid: string;
  role: string;
  name: string;
  rest: string;
  depth: number;
  /** Index of the enclosing row line, if any. */
  row: number;
}

const LINE = /^(\t*)\[(\d+)\] (\S+) '((?:[^'\\]|\\.)*)'(.*)$/;

function parse(axtree: string): Line[] {
  const out: Line[] = [];
  const rows: number[] = [];
  for (const text of axtree.split('\n')) {
    const m = LINE.exec(text);
    if (m === null) continue;
    const depth = m[1]!.length;
    while (rows.length > 0 && out[rows[rows.length - 1]!]!.depth >= depth) rows.pop();
    const line: Line = { bid: m[2]!, role: m[3]!, name: m[4]!.replace(/\\(.)/g, '$1'), rest: m[5]!, depth, row: rows.length > 0 ? rows[rows.length - 1]! : -1 };
    out.push(line);
    if (line.role === 'row') rows.push(out.length - 1);
  }
  return out;
}

/** The names the baseline recognises for a plain label: itself and its two commonest synonyms. */
const known = (plain: string): string[] => (SYNONYMS[plain] ?? [plain]).slice(0, 3).map((s) => s.toLowerCase());
const nameHas = (line: Line, plain: string): boolean => known(plain).some((k) => line.name.toLowerCase().includes(k.toLowerCase()));
const valueOf = (line: Line): string => /, value='((?:[^'\\]|\\.)*)'/.exec(line.rest)?.[1]?.replace(/\\(.)/g, '$1') ?? '';
const checkedOf = (line: Line): boolean => line.rest.includes('checked=true');

/** Creates the scripted web baseline. */
export function createWebBaselineAgent(): Agent {
  return {
    name: 'web-scripted',
    version: '1',
    config: () => ({}),
    begin(): AgentEpisode {
      let goal = '';
      let lines: Line[] = [];
      let url = '';
      let errors = 0;
      let waits = 0;
      let lastUrl = '';
      let scrolled = 0;
      const memory: Record<string, string> = {};
      const tool = (name: string, args: JsonObject): Action => ({ type: 'tool', tool: name, args });
      const click = (l: Line): Action => tool('click', { bid: l.bid });
      const find = (role: string | string[], test: (l: Line) => boolean): Line | undefined => lines.find((l) => (Array.isArray(role) ? role.includes(l.role) : l.role === role) && test(l));
      const field = (plain: string, role: string | string[] = ['textbox', 'searchbox']): Line | undefined => find(role, (l) => nameHas(l, plain));
      const rowOf = (test: (cells: string[]) => boolean): Line[] | undefined => {
        for (let i = 0; i < lines.length; i++) {
          if (lines[i]!.role !== 'row') continue;
          const inside = lines.filter((l) => l.row === i);
          if (test(inside.filter((l) => l.role === 'cell').map((l) => l.name))) return inside;
        }
        return undefined;
      };
      const wait = (): Action => {
        // Late elements and content below the fold: wait twice, scroll once, then page on; then give up.
        const next = find('button', (l) => l.name === 'Next page' && !l.rest.includes('disabled'));
        if (waits < 2) return (waits++, tool('noop', {}));
        if (scrolled < 1) return (scrolled++, tool('scroll', { direction: 'down' }));
        if (next !== undefined) return click(next);
        return { type: 'finish' };
      };
      const ensure = (plain: string, want: string, role = ['textbox', 'searchbox']): Action | undefined => {
        const f = field(plain, role);
        if (f === undefined) return undefined;
        if (f.role === 'combobox') return valueOf(f) === want ? undefined : tool('select_option', { bid: f.bid, value: want });
        return valueOf(f) === want ? undefined : tool('fill', { bid: f.bid, text: want });
      };
      const submit = (plain: string): Action => {
        const b = find('button', (l) => nameHas(l, plain) && !l.rest.includes('disabled'));
        return b === undefined ? wait() : click(b);
      };

      function customer(): Action {
        const m = /name "(.+?)", email "(.+?)", phone "(.+?)", tier "(.+?)", and (subscribe|do not)/.exec(goal) ?? /customer (.+?) \(email (.+?), phone (.+?)\) on the (\w+) tier, (with|without)/.exec(goal);
        if (m === null) return { type: 'finish' };
        const [, name, email, phone0, tier, news] = m as unknown as string[];
        if (url === '/customers' && memory['created'] === '1') return { type: 'finish' };
        if (url === '/customers') {
          const link = find('link', (l) => nameHas(l, 'Create') && l.name.toLowerCase().includes('customer'));
          return link === undefined ? wait() : click(link);
        }
        const phoneField = field('Phone');
        let phone = phone0!;
        if (phoneField !== undefined && /invalid='Use the format/.test(phoneField.rest)) {
          const d = phone.replace(/\D/g, '');
          phone = `${d.slice(0, 3)}-${d.slice(3, 6)}-${d.slice(6)}`;
        }
        const todo = ensure('Name', name!) ?? ensure('Email', email!) ?? ensure('Phone', phone) ?? ensure('Tier', tier!, ['combobox']);
        if (todo !== undefined) return todo;
        const box = field('Newsletter', 'checkbox');
        const wants = news === 'subscribe' || news === 'with';
        if (box !== undefined && checkedOf(box) !== wants) return tool(wants ? 'check' : 'uncheck', { bid: box.bid });
        memory['created'] = '1';
        return submit('Create');
      }

      function shipOrder(): Action {
        const customerName = /^(.+?) is waiting/.exec(goal)?.[1] ?? '';
        if (url === '/orders') {
          const box = find('searchbox', () => true);
          if (box !== undefined && valueOf(box) !== customerName) return tool('fill', { bid: box.bid, text: customerName });
          if (memory['searched'] !== '1') return (memory['searched'] = '1'), submit('Search');
          const row = rowOf((cells) => cells.includes(customerName) && cells.includes('pending'));
          const link = row?.find((l) => l.role === 'link');
          return link === undefined ? wait() : click(link);
        }
        if (url.startsWith('/orders/')) {
          if (lines.some((l) => l.role === 'text' && /: shipped$/.test(l.name))) return { type: 'finish' };
          return submit('Ship');
        }
        return { type: 'finish' };
      }

      function editPrice(): Action {
        const m = /price of "(.+?)" to \$(\d+(?:\.\d+)?)/.exec(goal);
        if (m === null) return { type: 'finish' };
        if (url === '/products') {
          if (memory['saved'] === '1') return { type: 'finish' };
          const row = rowOf((cells) => cells.includes(m[1]!));
          const link = row?.find((l) => l.role === 'link');
          return link === undefined ? wait() : click(link);
        }
        const price = field('Price');
        if (price === undefined) return wait();
        const want = /invalid=/.test(price.rest) ? Number(m[2]).toFixed(2) : m[2]!;
        if (valueOf(price) !== want) return tool('fill', { bid: price.bid, text: want });
        memory['saved'] = '1';
        return submit('Save');
      }

      function bulk(): Action {
        if (memory['done'] === '1') return { type: 'finish' };
        for (let i = 0; i < lines.length; i++) {
          if (lines[i]!.role !== 'row') continue;
          const inside = lines.filter((l) => l.row === i);
          const cells = inside.filter((l) => l.role === 'cell').map((l) => l.name);
          const box = inside.find((l) => l.role === 'checkbox');
          if (cells[3] === '0' && box !== undefined && !checkedOf(box)) return tool('check', { bid: box.bid });
        }
        const next = find('button', (l) => l.name === 'Next page' && !l.rest.includes('disabled'));
        if (next !== undefined) return click(next);
        if (lines.some((l) => l.name === 'Scroll down to load more rows') && scrolled < 6) return (scrolled++, tool('scroll', { direction: 'down' }));
        const b = find('button', (l) => nameHas(l, 'Discontinue'));
        if (b === undefined) return wait();
        memory['done'] = '1';
        return click(b);
      }

      function compare(): Action {
        const m = /Which costs more, "(.+?)" or "(.+?)"/.exec(goal);
        if (m === null) return { type: 'finish' };
        const [a, b] = [m[1]!, m[2]!];
        if (url.startsWith('/products/')) {
          const title = lines.find((l) => l.role === 'heading')?.name ?? '';
          const price = field('Price');
          if (price !== undefined) memory[title] = valueOf(price);
          return tool('go_back', {});
        }
        const next = [a, b].find((n) => memory[n] === undefined);
        if (next === undefined) {
          const win = Number(memory[a]) > Number(memory[b]) ? a : b;
          if (memory['said'] === '1') return { type: 'finish' };
          memory['said'] = '1';
          return { type: 'message', text: `${win} costs more: $${memory[win]}.` };
        }
        const row = rowOf((cells) => cells.includes(next));
        const link = row?.find((l) => l.role === 'link');
        return link === undefined ? wait() : click(link);
      }

      function checkout(): Action {
        const m = /Book (\d) seats? on the (\S+) trip from (\w+) to (\w+) on (\S+) for (.+?) \(email (.+?)\)/.exec(goal);
        if (m === null) return { type: 'finish' };
        const [, seats, depart, from, to, date, name, email] = m as unknown as string[];
        if (url === '/search') return ensure('From', from!, ['combobox']) ?? ensure('To', to!, ['combobox']) ?? ensure('Date', date!) ?? submit('Search');
        if (url === '/results') {
          const row = rowOf((cells) => cells.includes(depart!));
          const b = row?.find((l) => l.role === 'button');
          return b === undefined ? wait() : click(b);
        }
        if (/^\/book\/[^/]+$/.test(url)) return ensure('Passenger', name!) ?? ensure('Email', email!) ?? ensure('Seats', seats!, ['combobox']) ?? submit('Next');
        if (url.endsWith('/confirm')) return submit('Book');
        return { type: 'finish' };
      }

      function cancel(): Action {
        const who = /booking of (.+?)\.$/m.exec(goal)?.[1] ?? '';
        if (memory['done'] === '1') return { type: 'finish' };
        const row = rowOf((cells) => cells.includes(who) && cells.includes('confirmed'));
        const b = row?.find((l) => l.role === 'button' && nameHas(l, 'Cancel'));
        if (b === undefined) return wait();
        memory['done'] = '1';
        return click(b);
      }

      function next(): Action {
        // Layers first: banners and pop-ups are closed, confirmations accepted.
        const dialogs = lines.filter((l) => l.role === 'dialog');
        const top = dialogs[dialogs.length - 1];
        if (top !== undefined) {
          const inDialog = lines.slice(lines.indexOf(top) + 1).filter((l) => l.depth > top.depth);
          const pick = inDialog.find((l) => l.role === 'button' && /^(Accept all|No thanks|Close dialog|Yes, continue)$/.test(l.name));
          if (pick !== undefined) return click(pick);
        }
        if (url.startsWith('/login')) {
          const user = /user name "(.+?)"/.exec(goal)?.[1];
          const password = /password "(.+?)"/.exec(goal)?.[1];
          if (user === undefined || password === undefined) return { type: 'finish' };
          // It signs in, but believes what it typed before the timeout is still there.
          return ensure('User name', user) ?? ensure('Password', password) ?? submit('Sign in');
        }
        if (/new customer|Add the customer/.test(goal)) return customer();
        if (/is waiting for an order/.test(goal)) return shipOrder();
        if (/^Change the price/m.test(goal)) return editPrice();
        if (/^Discontinue every product/m.test(goal)) return bulk();
        if (/^Which costs more/m.test(goal)) return compare();
        if (/^Book \d seat/m.test(goal)) return checkout();
        if (/^Cancel the booking/m.test(goal)) return cancel();
        return { type: 'finish' };
      }

      return {
        act(observation: Observation): Action {
          if (observation.kind === 'reset') {
            const text = observation.text ?? '';
            goal = text.split('\n\nThe page now:\n')[0] ?? '';
            const page = text.split('\n\nThe page now:\n')[1] ?? '';
            url = /^URL: (\S+)/.exec(page)?.[1] ?? '';
            lines = parse(page);
          } else if (observation.error !== undefined) {
            if (++errors >= 3) return { type: 'finish' };
          } else if (observation.kind === 'tool' && observation.output !== undefined) {
            const out = observation.output as { url?: string; axtree?: string };
            url = (out.url ?? url).split('?')[0]!;
            lines = parse(out.axtree ?? '');
          }
          if (url !== lastUrl) {
            lastUrl = url;
            waits = 0;
            scrolled = 0;
          }
          return next();
        },
      };
    },
  };
}
