import { describeDomain } from '../../../test/conformance/domain.js';
import { math } from './index.js';

// Stateless question/answer templates: generation, determinism, oracle outcome 1, non-triviality, exact replay.
describeDomain(math);
