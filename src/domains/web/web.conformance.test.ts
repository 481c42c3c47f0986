import { describeDomain } from '../../../test/conformance/domain.js';
import { web } from './index.js';
// Every template at every level, the planted-mistake checks, and the scripted baseline played per level.
describeDomain(web);
