/** The MCP server: one episode's tools for MCP-capable agents, over stdio or stateless Streamable HTTP. */
export { createMcpServer, objectRoot, CONTROL_TOOLS, MCP_SERVER_VERSION } from './server.js';
export type { EpisodeMcpServer, LooseObject, McpServerOptions } from './server.js';
export { createMcpHttpHandler, mcpRoutes } from './http.js';
export type { McpHttpHandler, McpHttpHandlerOptions } from './http.js';
export { createEpisodeSession, EpisodeSession, renderObservation } from './session.js';
export type { EpisodeSelector, EpisodeSessionOptions, ResetSummary, StatusSummary, StepRefusal, StepSummary, TaskInfo } from './session.js';
