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
  readonly item: T;
  readonly order: number;
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
    const next = this.peek();
    return next !== undefined && next.atMs <= atMs ? this.pop() : undefined;
  }

  /** The earliest event, left in place. */
  peek(): T | undefined {
    return this.#slots[0]?.item;
  }

  /** Adds an event. */
  push(item: T): void {
    const slots = this.#slots;
    slots.push({ item, order: this.#counter++ });
    let i = slots.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(slots[i], slots[parent])) break;
      [slots[i], slots[parent]] = [slots[parent], slots[i]];
      i = parent;
    }
  }

  /** Removes and returns the earliest event. */
  pop(): T | undefined {
    const slots = this.#slots;
    if (slots.length === 0) return undefined;
    const top = slots[0].item;
    const last = slots.pop()!;
    if (slots.length > 0) {
      slots[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let least = i;
        if (left < slots.length && before(slots[left], slots[least])) least = left;
        if (right < slots.length && before(slots[right], slots[least])) least = right;
        if (least === i) break;
        [slots[i], slots[least]] = [slots[least], slots[i]];
        i = least;
      }
    }
    return top;
  }
}

function before<T extends Timed>(a: Slot<T>, b: Slot<T>): boolean {
  return a.item.atMs < b.item.atMs || (a.item.atMs === b.item.atMs && a.order < b.order);
}
