// ---- public surface (generated from what other wings import) ----
export { createApp } from './server.js';
