import { describeDomain } from '../../../test/conformance/domain.js';
import { createLibraryDeskAgent, library } from './index.js';

// Every template at every level, plus the planted-mistake checks of the strengthened suite.
describeDomain(library, { baselines: [createLibraryDeskAgent()] });
