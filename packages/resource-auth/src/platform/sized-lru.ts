/**
 * A least-recently-used cache bounded by memory rather than by a count: each entry is charged
 * what `sizeOf` says it costs (an estimate: JavaScript cannot measure an object graph, so each
 * cache states what its entries were measured at, in docs/performance.md), and once the charges
 * pass `budgetBytes` the least recently used entries go, never the one just stored. Used where
 * an entry per tenant or realm would otherwise grow with everything that ever existed: the
 * token service's realm providers and keys, the resource servers' JWKS cache.
 *
 * `get` refreshes recency (a Map delete and set: the Map's order is the recency order); `peek`
 * does not. Sizes are read when an entry is stored or `resize`d, so an entry whose size changes
 * (a key set refetched) is `resize`d by its owner.
 */
export class SizedLru<K, V> {
  readonly #entries = new Map<K, { value: V; bytes: number }>();
  #bytes = 0;
  #evictions = 0;

  constructor(
    readonly budgetBytes: number,
    private readonly sizeOf: (value: V) => number,
    private readonly onEvict?: (key: K, value: V) => void,
  ) {
    if (!(budgetBytes > 0)) throw new RangeError('budgetBytes must be positive');
  }

  /** Entries held. */
  get size(): number {
    return this.#entries.size;
  }

  /** What the entries held are charged, in bytes. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Entries dropped to stay within the budget since start. */
  get evictions(): number {
    return this.#evictions;
  }

  /** The value, made the most recently used. */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** The value, its recency untouched. */
  peek(key: K): V | undefined {
    return this.#entries.get(key)?.value;
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** True when storing an entry of `bytes` more would push another out. */
  full(bytes: number): boolean {
    return this.#bytes + bytes > this.budgetBytes;
  }

  /** Stores `value` as the most recently used, then drops the least recently used others while over the budget. */
  set(key: K, value: V): void {
    this.delete(key);
    const bytes = this.sizeOf(value);
    this.#entries.set(key, { value, bytes });
    this.#bytes += bytes;
    this.#shrink(key);
  }

  /** Charges the entry again (its value changed size), keeping its recency. */
  resize(key: K): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    const bytes = this.sizeOf(entry.value);
    this.#bytes += bytes - entry.bytes;
    entry.bytes = bytes;
    this.#shrink(key);
  }

  delete(key: K): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
    return true;
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }

  #shrink(keep: K): void {
    for (const [key, entry] of this.#entries) {
      if (this.#bytes <= this.budgetBytes) return;
      if (key === keep) continue;
      this.#entries.delete(key);
      this.#bytes -= entry.bytes;
      this.#evictions += 1;
      this.onEvict?.(key, entry.value);
    }
  }
}
