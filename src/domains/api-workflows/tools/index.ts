/** Every api-workflows tool, in a stable order. */
import type { Tool } from '../../../core/index.js';
import type { ApiState } from '../state.js';
import { billingTools } from './billing.js';
import { calendarTools } from './calendar.js';
import { crmTools } from './crm.js';
import { mailTools } from './mail.js';
import { operationsTools } from './operations.js';
import { ticketTools } from './tickets.js';

export const apiTools: readonly Tool<ApiState, any>[] = [...crmTools, ...billingTools, ...operationsTools, ...ticketTools, ...calendarTools, ...mailTools];
export const API_TOOL_NAMES: readonly string[] = apiTools.map((t) => t.name);
export { settledCents } from './billing.js';
export { freeSlots, toUtc } from './calendar.js';
export { PAGE_SIZE } from './common.js';
