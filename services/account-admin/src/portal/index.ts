// ---- public surface (generated from what other wings import) ----
export { pageRoutes } from './page-errors.js';
export { ASSETS_PATH, confirmDialog, layout, messagePage, sendPage } from './pages.js';
export type { PageViewer } from './pages.js';
export { timeOf } from './time-of.js';
