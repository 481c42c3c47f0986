import { describeDomain } from '../../../test/conformance/domain.js';
import { library } from './index.js';

// Every template at every level, plus the planted-mistake checks; the declared baseline is played per level.
describeDomain(library);
