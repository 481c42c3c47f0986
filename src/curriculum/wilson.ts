/** Wilson score intervals: in core (domains report intervals too); the curriculum's files import them from here. */
export { wilsonInterval } from '../core/index.js';
