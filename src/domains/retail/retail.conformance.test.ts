import { describeDomain } from '../../../test/conformance/domain.js';
import { retail } from './index.js';

// Every template at every level: generation, determinism, oracle outcome 1, non-triviality, exact replay.
describeDomain(retail);
