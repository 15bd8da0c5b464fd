/**
 * A binary min-heap of timed events; ties break by insertion order, so a run
 * never depends on how the heap happens to arrange equal times.
 *
 * The times and insertion counts sit side by side in typed arrays, beside
 * the items, rather than in an object made for each event: a 1000-node run
 * pushes some twelve million events (most of them the offered traffic's
 * requests), and each sift compares times far more often than it moves an
 * item.
 *
 * @module
 */

/** A priority queue by time, first in first out among equal times. */
export class EventHeap<T> {
  #atMs = new Float64Array(1024);
  /** By place, when the event there was pushed: counts up past 2^32, so a float. */
  #order = new Float64Array(1024);
  #items: T[] = [];
  #size = 0;
  #counter = 0;

  /** Events waiting. */
  get size(): number {
    return this.#size;
  }

  /** When the earliest event is due; `Infinity` when none waits. */
  peekAtMs(): number {
    return this.#size === 0 ? Infinity : this.#atMs[0];
  }

  /** The earliest event, left in place. */
  peek(): T | undefined {
    return this.#size === 0 ? undefined : this.#items[0];
  }

  /** Adds `item`, due at `atMs`. */
  push(atMs: number, item: T): void {
    if (this.#size === this.#atMs.length) this.#grow();
    const at = this.#atMs, order = this.#order, items = this.#items;
    const count = this.#counter++;
    // Sift the hole up, then fill it: a move a level rather than a swap.
    let i = this.#size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = at[parent];
      if (!(atMs < p || (atMs === p && count < order[parent]))) break;
      at[i] = p;
      order[i] = order[parent];
      items[i] = items[parent];
      i = parent;
    }
    at[i] = atMs;
    order[i] = count;
    items[i] = item;
  }

  /** Removes and returns the earliest event. */
  pop(): T | undefined {
    if (this.#size === 0) return undefined;
    const at = this.#atMs, order = this.#order, items = this.#items;
    const top = items[0];
    const n = --this.#size;
    const lastAt = at[n], lastOrder = order[n], last = items[n];
    items[n] = undefined as T; // not kept alive by the heap
    if (n > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= n) break;
        const right = left + 1;
        const least = right < n &&
            (at[right] < at[left] || (at[right] === at[left] && order[right] < order[left]))
          ? right
          : left;
        const l = at[least];
        if (!(l < lastAt || (l === lastAt && order[least] < lastOrder))) break;
        at[i] = l;
        order[i] = order[least];
        items[i] = items[least];
        i = least;
      }
      at[i] = lastAt;
      order[i] = lastOrder;
      items[i] = last;
    }
    return top;
  }

  #grow(): void {
    const at = new Float64Array(2 * this.#atMs.length);
    at.set(this.#atMs);
    this.#atMs = at;
    const order = new Float64Array(2 * this.#order.length);
    order.set(this.#order);
    this.#order = order;
  }
}
