/** Core contracts and vocabulary of EnvHarness: no I/O, imports nothing else in src/. */
export * from './json.js';
export * from './errors.js';
export * from './canonical-json.js';
export * from './digest.js';
export * from './rng.js';
export * from './ids.js';
export * from './episode.js';
export * from './template.js';
export * from './domain.js';
export * from './batch.js';
export * from './snapshot.js';
export * from './run.js';
export * from './store.js';
export * from './defaults.js';
export * from './define.js';
export * from './agent.js';
