/** Interoperability with the benchmarks agent builders already report on: tau-bench retail. */
export * from './tau-bench/index.js';
