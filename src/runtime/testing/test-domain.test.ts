import { describeDomain } from '../../../test/conformance/domain.js';
import { createInventoryDomain } from './index.js';

describeDomain(createInventoryDomain());
