/** The system clock, read only here: for timestamps on records (createdAt), never for generation, sampling, faults or replay. */
export type Clock = () => string;

export const systemClock: Clock = () => new Date().toISOString();
