/**
 * A binary min-heap of timed events; ties break by insertion order, so a run
 * never depends on how the heap happens to arrange equal times.
 *
 * @module
 */

/** Something scheduled at `atMs`. */
export interface Timed {
  /** Virtual time, in milliseconds. */
  readonly atMs: number;
}

interface Slot<T> {
  /** The item's time, read once: the heap compares it far more often than it pushes. */
  readonly atMs: number;
  readonly order: number;
  readonly item: T;
}

/** A priority queue by time, first in first out among equal times. */
export class EventHeap<T extends Timed> {
  readonly #slots: Slot<T>[] = [];
  #counter = 0;

  /** Events waiting. */
  get size(): number {
    return this.#slots.length;
  }

  /** Takes the earliest event if it is due by `atMs`. */
  popDue(atMs: number): T | undefined {
    const next = this.#slots[0];
    return next !== undefined && next.atMs <= atMs ? this.pop() : undefined;
  }

  /** The earliest event, left in place. */
  peek(): T | undefined {
    return this.#slots[0]?.item;
  }

  /** Adds an event. */
  push(item: T): void {
    const slots = this.#slots;
    const slot = { atMs: item.atMs, order: this.#counter++, item };
    // Sift the hole up, then fill it: a move a level rather than a swap.
    let i = slots.length;
    slots.push(slot);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(slot, slots[parent])) break;
      slots[i] = slots[parent];
      i = parent;
    }
    slots[i] = slot;
  }

  /** Removes and returns the earliest event. */
  pop(): T | undefined {
    const slots = this.#slots;
    if (slots.length === 0) return undefined;
    const top = slots[0].item;
    const last = slots.pop()!;
    const n = slots.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= n) break;
        const right = left + 1;
        const least = right < n && before(slots[right], slots[left]) ? right : left;
        if (!before(slots[least], last)) break;
        slots[i] = slots[least];
        i = least;
      }
      slots[i] = last;
    }
    return top;
  }
}

function before<T>(a: Slot<T>, b: Slot<T>): boolean {
  return a.atMs < b.atMs || (a.atMs === b.atMs && a.order < b.order);
}
