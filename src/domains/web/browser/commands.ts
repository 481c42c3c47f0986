/** `envharness web open --task ID`: a web task's first page as real HTML, in Chromium when one is there. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EnvHarnessError, type CommandContext, type DomainCommand } from '../../../core/index.js';
import { pageOfTask } from '../state.js';
import { renderDocument } from './render.js';

/** The CLI commands the web domain contributes (`Domain.commands`). Playwright loads only when one runs. */
export function webCommands(): DomainCommand[] {
  return [
    {
      path: ['web', 'open'],
      parents: { web: 'open a task of a domain that draws pages in a real browser' },
      description: "render a web task's first page to HTML and open it: a live Chromium window when there is a display, else the HTML file and a screenshot",
      options: [
        { flags: '--task <id>', description: 'a web task id from the store', required: true },
        { flags: '--out <dir>', description: 'where to write page.html and page.png (default .envharness/web/<task id>)' },
        { flags: '--headless', description: 'never open a window, even with a display', default: false },
      ],
      run: (options, cli) => openTask(options as { task: string; out?: string; headless: boolean }, cli),
    },
  ];
}

async function openTask(options: { task: string; out?: string; headless: boolean }, cli: CommandContext): Promise<void> {
  const store = await cli.openStore();
  let task;
  try {
    task = await store.getTask(options.task);
  } finally {
    await store.close();
  }
  if (task === undefined) throw new EnvHarnessError('TASK_NOT_FOUND', `no task ${options.task} in ${cli.store}; list tasks with envharness pool list`, { details: { pointer: '/task', taskId: options.task } });
  if (task.domain !== 'web') throw new EnvHarnessError('PARAMS_INVALID', `task ${options.task} is a ${task.domain} task; web open shows web tasks only`, { details: { pointer: '/task', taskId: options.task, domain: task.domain } });
  const page = pageOfTask(task);
  const dir = resolve(options.out ?? join('.envharness', 'web', task.id.replace(/[^A-Za-z0-9._-]/g, '_')));
  const html = join(dir, 'page.html');
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(html, renderDocument(page));
  } catch (error) {
    throw new EnvHarnessError('CONFIG_INVALID', `cannot write ${html} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); choose a writable folder with --out`, { cause: error, details: { pointer: '/out' } });
  }
  const { findChromium, launchChromium, noChromiumError } = await import('./chromium.js');
  const executablePath = findChromium(cli.env);
  const headed = !options.headless && (Boolean(cli.env.DISPLAY) || Boolean(cli.env.WAYLAND_DISPLAY));
  const result: Record<string, string | boolean> = { task: task.id, url: page.url, title: page.title, html };
  if (executablePath === undefined) {
    if (cli.json) cli.printJson({ ...result, screenshot: null, live: false });
    else cli.out(`wrote ${cli.style.bold(html)} (${page.title}, ${page.url})`);
    cli.err(`${cli.style.yellow('warning')} no screenshot: ${noChromiumError().message}`);
    return;
  }
  const { BrowserPage } = await import('./browser-page.js');
  const browser = await launchChromium({ executablePath, headless: !headed });
  try {
    const live = await BrowserPage.open(browser.context, page);
    const png = join(dir, 'page.png');
    await live.screenshot({ path: png, fullPage: true });
    result['screenshot'] = png;
    result['live'] = headed;
    if (cli.json) cli.printJson(result);
    else cli.out(`wrote ${cli.style.bold(html)} and ${cli.style.bold(png)} (${page.title}, ${page.url})`);
    if (headed) {
      cli.err('a Chromium window shows the live page (actions run the site logic); close it to exit');
      await new Promise<void>((done) => {
        live.page.on('close', () => done());
        browser.context.on('close', () => done());
      });
    }
  } finally {
    await browser.close().catch(() => {});
  }
}
