/**
 * The `portal` wing's public module: other wings import it from here only.
 *
 * The page shell every portal page renders into: layout, navigation and the signed-in person's
 * header, the message page, the shared confirmation dialog, `timeOf`, `sendPage`, page routes
 * whose errors are error pages, and the error pages browsers get for any other path.
 *
 * May call: platform.
 */
// What other wings use:
export { browserErrorPages, errorPage, pageRoutes, wantsPage } from './page-errors.js';
export { ASSETS_PATH, confirmDialog, layout, messagePage, sendPage } from './pages.js';
export type { PageViewer } from './pages.js';
export { timeOf } from './time-of.js';
