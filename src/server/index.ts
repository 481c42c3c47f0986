/** The HTTP API v1 of EnvHarness: `createServer({ harness })`, its guards, the error -> status table. */
export { createServer, SERVER_DEFAULTS } from './server.js';
export type { EnvHarnessServer, ServerOptions } from './server.js';
export type { ExtraRoutes, ServerContext, ServerEnv } from './app.js';
export { EpisodeRegistry, ServerEpisode, MAX_IDEMPOTENCY_KEYS, RELAXED_COMMIT_MS } from './episodes.js';
export type { Durability, EpisodeSource, EpisodeView, ResetInfo, ServerEpisodeStatus } from './episodes.js';
export { HTTP_STATUS, PROBLEM_CONTENT_TYPE, HttpProblem, problem, problemOf, problemReply } from './errors.js';
export type { HttpOnlyCode, Problem, ProblemCode, Reply } from './errors.js';
export { isLoopback, HostPolicy, MIN_TOKEN_LENGTH } from './auth.js';
export { GroupRegistry, JoinGroupBodySchema, MAX_GROUP_SIZE } from './groups.js';
export type { GroupMember, GroupView, JoinGroupBody } from './groups.js';
export type { EpisodeEvent } from './episodes.js';
export { createOpenEnvSurface, OPENENV_DEFAULTS, OPENENV_VERSION } from './openenv/index.js';
export type { OpenEnvOptions, OpenEnvSurface } from './openenv/index.js';
