/** Placeholder: the retail skill set lands once the retail templates and user exist. */
import { genericSkills, type SkillSet } from './skill-set.js';

export const retailSkills: SkillSet = {
  id: 'retail@0',
  handles: (domain) => domain === 'retail',
  start: (reset) => genericSkills.start(reset),
};
