import { describeDomain } from '../../../test/conformance/domain.js';
import { apiWorkflows } from './index.js';

// Every template at every level: generation, determinism, oracle outcome 1 through every fault, non-triviality, exact replay.
describeDomain(apiWorkflows);
