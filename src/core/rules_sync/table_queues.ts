/**
 * The rules table's queues in time order: slots of tombstones in the
 * order they were made (for expiry and for giving up the oldest when room
 * is needed), and blocks in a min-heap by when they end.
 *
 * @module
 */

/**
 * Slot numbers in the order they were pushed, taken from the head. The
 * spent head is forgotten once it is most of the queue, so it stays
 * bounded by the slots pushed and not yet taken.
 */
export class SlotQueue {
  #slots: number[] = [];
  #head = 0;

  /** Slots pushed and not yet taken. */
  get length(): number {
    return this.#slots.length - this.#head;
  }

  /** Adds `slot` at the tail. */
  push(slot: number): void {
    this.#slots.push(slot);
  }

  /** The slot at the head, undefined when the queue is empty. */
  peek(): number | undefined {
    return this.#head < this.#slots.length ? this.#slots[this.#head] : undefined;
  }

  /** Takes the head. */
  shift(): void {
    this.#head++;
    if (this.#head > 1_024 && this.#head * 2 > this.#slots.length) {
      this.#slots = this.#slots.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Renumbers the slots by `moved` (after a compaction), dropping those it maps to -1. */
  remap(moved: Int32Array): void {
    this.#slots = this.#slots.slice(this.#head).map((slot) => moved[slot]).filter((s) => s >= 0);
    this.#head = 0;
  }
}

/** Adds `item` to the min-heap `heap` by `untilMs`. */
export function pushMin<T extends { untilMs: number }>(heap: T[], item: T): void {
  let at = heap.push(item) - 1;
  while (at > 0) {
    const up = (at - 1) >> 1;
    if (heap[up].untilMs <= item.untilMs) break;
    heap[at] = heap[up];
    at = up;
  }
  heap[at] = item;
}

/** Takes the least item of the non-empty min-heap `heap`. */
export function popMin<T extends { untilMs: number }>(heap: T[]): T {
  const top = heap[0];
  const last = heap.pop()!;
  if (heap.length === 0) return top;
  let at = 0;
  for (;;) {
    let child = 2 * at + 1;
    if (child >= heap.length) break;
    if (child + 1 < heap.length && heap[child + 1].untilMs < heap[child].untilMs) child++;
    if (heap[child].untilMs >= last.untilMs) break;
    heap[at] = heap[child];
    at = child;
  }
  heap[at] = last;
  return top;
}
