/** Pages a person sees: escaped HTML templates, the one stylesheet, header and page frame. */
export * from './html.js';
export * from './page-look.js';
