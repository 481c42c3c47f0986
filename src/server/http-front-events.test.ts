/**
 * The front's tests again, with every connection reading through 'data' events: the path `readInto` falls back to
 * on a Node without net's `onread` internals (kBuffer, kBufferCb, useUserBuffer), which this Node has.
 */
import { readThroughDataEvents } from './http-front.js';

readThroughDataEvents();
await import('./http-front.test.js');
