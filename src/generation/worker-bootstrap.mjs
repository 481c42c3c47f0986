// Piscina entry when generation runs from TypeScript sources (tsx, vitest): worker threads do not inherit
// the parent's module hooks and ignore `--import` in execArgv on Node 20, so register tsx here first.
const { register } = await import('tsx/esm/api');
register();
const worker = await import('./worker.ts');
export default worker.default;
export const transferring = worker.transferring;
