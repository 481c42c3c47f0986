/** Tool schemas for agents: `toolSpec` and `deepFreeze` live in core (domains build tool specs too); the runtime's files import them from here. */
export { deepFreeze, toolSpec } from '../core/index.js';
