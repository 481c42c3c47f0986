/**
 * Timestamps for records (createdAt, review decisions, storage-fault times), injected by the caller: the
 * library never reads the system clock itself. The CLI and the server pass `systemClock` (src/cli/clock.ts);
 * tests may pass a fixed or ticking clock; library users pass a wall clock (README, "The six verbs").
 * Never used for generation, sampling, faults or replay.
 */
export type Clock = () => string;
