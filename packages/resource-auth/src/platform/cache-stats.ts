/** What a memory-bounded cache (`SizedLru`) reports: entries held, what they are charged, its budget, evictions since start. */
export interface CacheStats {
  entries: number;
  bytes: number;
  budgetBytes: number;
  evictions: number;
}
