import type { Clock } from '../harness/clock.js';

/** The system clock: read only at the process edge (CLI, server) and handed down to the harness and stores. */
export const systemClock: Clock = () => new Date().toISOString();
