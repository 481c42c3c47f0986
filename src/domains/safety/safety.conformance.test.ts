import { describeDomain } from '../../../test/conformance/domain.js';
import { createRetailDomain } from '../retail/index.js';
import { createAttackDomain } from './domain.js';

// The wrapped retail domain: every attack kind at every level, one generation seed (retail's own
// conformance test covers its templates with three).
describeDomain(createAttackDomain(createRetailDomain()), { seeds: [1] });
