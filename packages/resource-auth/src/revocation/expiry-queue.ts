/** A principal's confirmed entry as the queue knows it: where it is and when it was due when queued. */
export interface Due {
  until: number;
  tenant: string;
  sub: string;
}

/**
 * The confirmed entries of the revocation map in the order they fall due (a binary min-heap on
 * `until`), so expiring costs what expires, not a walk over every entry: the periodic resync
 * then follows the changes, whatever the map holds. An entry whose `until` a later change pushed
 * back is queued again and its older item is skipped when it surfaces (the map checks the entry's
 * current `until`), so the queue holds one item per change of the horizon, as the map does per
 * principal: bound follows live data.
 */
export class ExpiryQueue {
  readonly #heap: Due[] = [];

  push(item: Due): void {
    const heap = this.#heap;
    heap.push(item);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.until <= item.until) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = item;
  }

  /** The item due first, if it is due at `now`, removed from the queue. */
  popDue(now: number): Due | undefined {
    const heap = this.#heap;
    const top = heap[0];
    if (top === undefined || top.until > now) return undefined;
    const last = heap.pop()!;
    if (heap.length > 0) this.#siftDown(last);
    return top;
  }

  clear(): void {
    this.#heap.length = 0;
  }

  #siftDown(item: Due): void {
    const heap = this.#heap;
    const n = heap.length;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && heap[right]!.until < heap[left]!.until ? right : left;
      if (heap[child]!.until >= item.until) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = item;
  }
}
