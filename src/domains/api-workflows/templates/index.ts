/** The api-workflows templates: seven training task types and one held-out type. */
import type { RegisteredTemplate } from '../../../core/index.js';
import { bulkTemplate } from './bulk.js';
import type { ApiParams } from './common.js';
import { conditionalTemplate } from './conditional.js';
import { createTemplate } from './create.js';
import { lookupTemplate } from './lookup.js';
import { reconcileTemplate } from './reconcile.js';
import { recoveryTemplate } from './recovery.js';
import { replacementTemplate } from './replacement.js';
import { scheduleTemplate } from './schedule.js';

export const apiTrainingTemplates: readonly RegisteredTemplate<ApiParams>[] = [lookupTemplate, createTemplate, bulkTemplate, conditionalTemplate, reconcileTemplate, scheduleTemplate, recoveryTemplate];
export const apiHeldoutTemplates: readonly RegisteredTemplate<ApiParams>[] = [replacementTemplate];
export const apiTemplates: readonly RegisteredTemplate<ApiParams>[] = [...apiTrainingTemplates, ...apiHeldoutTemplates];
export { bulkTemplate, conditionalTemplate, createTemplate, lookupTemplate, reconcileTemplate, recoveryTemplate, replacementTemplate, scheduleTemplate };
export { DRIFTS, INSTRUCTIONS, money, paramsSchema, type ApiParams, type UserFacts } from './common.js';
