import { createRetailDomain, generateRetailWorld, loadTauBenchTasks, loadTauBenchWorld, NO_CONTEXT } from '../src/domains/retail/index.js';
const dir = '/work/shared/data/tau-bench-retail';
const world = loadTauBenchWorld(dir); world.digest;
const retail = createRetailDomain({ worlds: [world] });
const base = retail.createState({ world: 'tau-bench', digest: world.digest });
const tasks = loadTauBenchTasks(dir, 'train');
const byName = new Map(retail.tools.map((t) => [t.name, t]));
const episodes = tasks.map((t) => t.actions);
const cpu = () => { const c = process.cpuUsage(); return c.user + c.system; };
function validated() { let n = 0; const c0 = cpu(); for (let r = 0; r < 20; r++) for (const e of episodes) { const s = retail.fork(base); for (const a of e) { const tool = byName.get(a.name)!; const p = tool.args.safeParse(a.kwargs); if (p.success) tool.run(s, p.data, NO_CONTEXT); n++; } } return (cpu() - c0) / n; }
for (let i = 0; i < 3; i++) console.log('small heap: validated', validated().toFixed(2), 'µs cpu');
const keep = [generateRetailWorld({ seed: 1, users: 5000, orders: 10000, products: 120 })];
retail.addWorld(keep[0]!);
for (let i = 0; i < 3; i++) console.log('with 10k world (digest computed):', validated().toFixed(2), 'µs cpu');
console.log(process.memoryUsage().heapUsed / 1e6, 'MB heap');
