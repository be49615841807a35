/** Helpers shared by the end-to-end tests (platform start-up, clients) live here. */
export {};
