export { createOrsSurface, ORS_DEFAULTS, ORS_VERSION, type OrsOptions, type OrsSurface, type OrsSurfaceDeps } from './surface.js';
