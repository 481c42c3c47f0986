/** OpenEnv's environment-server protocol on the EnvHarness server (HTTP, the `/ws` session, MCP JSON-RPC on `/mcp`). */
export { createOpenEnvSurface, OPENENV_DEFAULTS, OPENENV_VERSION } from './surface.js';
export type { OpenEnvOptions, OpenEnvSurface, OpenEnvSurfaceDeps } from './surface.js';
export { parseReset, toAction, RESET_KEYS, SCHEMAS as OPENENV_SCHEMAS, WS_ERROR_CODES } from './messages.js';
export type { OpenEnvMetadata, OpenEnvResult, WsErrorCode } from './messages.js';
