/**
 * The blocked keys: a bounded set of their own, apart from the key table,
 * so that blocks never take the places check traffic needs. Before, a
 * block lived in its key's slot, which no sweep frees until the block
 * ends: 8,192 blocks filled the default table, and every new user fell on
 * the shared overflow allowance for as long as they lasted.
 *
 * Each entry holds its key's slot (the block is the slot's GCRA state, as
 * `operations.ts` describes) and the instant the block ends. A full set
 * makes room by dropping the entry nearest its end, an ended one first:
 * the block that costs least to lose. Entries are ordered by a binary
 * min-heap on that instant, so making room, and moving an entry's end, cost
 * O(log n) whatever the set holds.
 *
 * A hot key is the exception: the allocator holds its slot, so its block
 * stays in its place in the table (at most `hotKeys` of them), with an
 * entry here all the same, which bounds it and ends it when evicted.
 *
 * @module
 */

import type { KeyTable, Slot } from "./keytable.ts";

/** One blocked key. */
export interface BlockEntry {
  /** The key's slot, which carries the block. */
  readonly slot: Slot;
  /** When the block ends, µs of the time base. */
  untilUs: number;
  /** Whether the slot keeps its place in the key table while blocked: a hot key's. */
  readonly inTable: boolean;
  /** The entry's place in the heap. */
  index: number;
}

/** What the set moves slots to and from: the enforcer's table and indexes. */
export interface BlockHost {
  /** The key table (and whether fresh slots start lean, `KeyTable.lean`). */
  readonly table: KeyTable;
  /** A slot that left the table for the set: out of the fleet's key index too. */
  leftTable(slot: Slot): void;
  /** Gives a slot a place in the table, if one is free; returns whether it has one. */
  place(slot: Slot, nowUs: number): boolean;
  /** A slot that leaves the set and has no place: forgotten by every index of slots. */
  forget(slot: Slot): void;
}

/** Blocked keys, at most a bound; see the module doc. */
export class BlockSet {
  readonly #max: number;
  readonly #host: BlockHost;
  readonly #byClass = new Map<string, Map<string, BlockEntry>>();
  readonly #heap = new BlockHeap();
  #evicted = 0;

  /**
   * An empty set.
   *
   * @param max Keys blocked at most (`GuardOptions.maxBlocks`).
   * @param host The table and indexes slots move between.
   */
  constructor(max: number, host: BlockHost) {
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(`maxBlocks: expected a whole number above 0, got ${max}`);
    }
    this.#max = max;
    this.#host = host;
  }

  /** Entries held now, ended ones not yet dropped included. */
  get size(): number {
    return this.#heap.size;
  }

  /** Keys blocked at most. */
  get max(): number {
    return this.#max;
  }

  /** Blocks ended early, since the set was made, to make room for another. */
  get evicted(): number {
    return this.#evicted;
  }

  /** The slot of a key's entry, if it has one. */
  get(className: string, key: string): Slot | undefined {
    return this.#byClass.get(className)?.get(key)?.slot;
  }

  /**
   * What a check of a key with no place in the table finds here: its slot
   * while blocked (to decide on, taking no place); once its block has
   * ended, its slot with the state the block left, out of the set, for the
   * caller to place; or nothing.
   */
  take(className: string, key: string, nowUs: number): Slot | undefined {
    const entry = this.#byClass.get(className)?.get(key);
    if (entry === undefined || entry.slot.atUs > nowUs) return entry?.slot;
    this.#delete(entry);
    return entry.slot;
  }

  /**
   * Holds the block `slot` now carries (its instant, `atUs`, is when it
   * ends), out of the table unless the key is hot. A full set first drops
   * the entry nearest its end (an ended one, or the block that would end
   * soonest, counted in {@link evicted}): the block made last always holds.
   * A block moved to now (lifted) stays as an ended entry, which the key's
   * next check puts back in the table.
   */
  hold(slot: Slot, nowUs: number): void {
    const held = this.#byClass.get(slot.className)?.get(slot.key);
    if (held?.slot === slot) return this.#heap.move(held, slot.atUs);
    if (slot.atUs <= nowUs) return;
    if (held !== undefined) this.#drop(held, nowUs); // a hot key's, whose slot was since swept
    const table = this.#host.table;
    const inTable = table.get(slot.className, slot.key) === slot;
    const keep = inTable && slot.hot !== undefined;
    if (inTable && !keep) {
      table.delete(slot);
      this.#host.leftTable(slot);
    }
    // Nominated to no allocator while out of the table: it is placed anew after.
    if (!keep) slot.candidate = true;
    if (this.#heap.size >= this.#max) {
      const nearest = this.#heap.nearest()!;
      if (nearest.untilUs > nowUs) this.#evicted++;
      this.#drop(nearest, nowUs);
    }
    const entry: BlockEntry = { slot, untilUs: slot.atUs, inTable: keep, index: 0 };
    let map = this.#byClass.get(slot.className);
    if (map === undefined) this.#byClass.set(slot.className, map = new Map());
    map.set(slot.key, entry);
    this.#heap.push(entry);
  }

  /**
   * Takes `slot` out of the set, if it is there, back to a place in the
   * table as a checked key has (or none, if the table has no room): for a
   * key reset, which stands as a new key would.
   */
  release(slot: Slot, nowUs: number): void {
    const held = this.#byClass.get(slot.className)?.get(slot.key);
    if (held?.slot !== slot) return;
    this.#delete(held);
    if (!held.inTable && !this.#host.place(slot, nowUs)) this.#host.forget(slot);
  }

  /**
   * Keys blocked now; ended blocks that left nothing a fresh slot would
   * not have are dropped on the way ({@link dropEnded}).
   */
  blocked(nowUs: number): number {
    this.dropEnded(nowUs);
    let blocked = 0;
    for (const entry of this.#heap.entries()) if (entry.untilUs > nowUs) blocked++;
    return blocked;
  }

  /**
   * Drops the ended blocks nearest their end that leave nothing a fresh
   * slot would not have, stopping at the first that does.
   */
  dropEnded(nowUs: number): void {
    for (let e = this.#heap.nearest(); e !== undefined; e = this.#heap.nearest()) {
      if (e.untilUs > nowUs || (!e.inTable && !e.slot.replenished(nowUs, this.#host.table.lean))) {
        return;
      }
      this.#drop(e, nowUs);
    }
  }

  /**
   * Drops an entry. A hot key's block, which lives in its place in the
   * table, ends now if it has not (its burst comes back at its rate, as
   * when a block ends); any other key's slot goes with its entry.
   */
  #drop(entry: BlockEntry, nowUs: number): void {
    this.#delete(entry);
    const slot = entry.slot;
    if (!entry.inTable) {
      this.#host.forget(slot);
    } else if (slot.atUs > nowUs) {
      slot.debt = slot.rule.toleranceUnits;
      slot.atUs = nowUs;
    }
  }

  #delete(entry: BlockEntry): void {
    const { className, key } = entry.slot;
    const map = this.#byClass.get(className);
    map?.delete(key);
    if (map?.size === 0) this.#byClass.delete(className);
    this.#heap.delete(entry);
  }
}

/** Block entries in a binary min-heap on when they end. */
class BlockHeap {
  readonly #heap: BlockEntry[] = [];

  get size(): number {
    return this.#heap.length;
  }

  /** The entry nearest its end, if any. */
  nearest(): BlockEntry | undefined {
    return this.#heap[0];
  }

  entries(): IterableIterator<BlockEntry> {
    return this.#heap.values();
  }

  push(entry: BlockEntry): void {
    entry.index = this.#heap.length;
    this.#heap.push(entry);
    this.#up(entry.index);
  }

  /** Moves an entry's end to `untilUs`, earlier or later. */
  move(entry: BlockEntry, untilUs: number): void {
    entry.untilUs = untilUs;
    this.#up(entry.index);
    this.#down(entry.index);
  }

  delete(entry: BlockEntry): void {
    const last = this.#heap.pop()!;
    if (last === entry) return;
    this.#heap[entry.index] = last;
    last.index = entry.index;
    this.#up(last.index);
    this.#down(last.index);
  }

  #up(i: number): void {
    const heap = this.#heap, entry = heap[i];
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent].untilUs <= entry.untilUs) break;
      heap[i] = heap[parent];
      heap[i].index = i;
      i = parent;
    }
    heap[i] = entry;
    entry.index = i;
  }

  #down(i: number): void {
    const heap = this.#heap, entry = heap[i], n = heap.length;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && heap[child + 1].untilUs < heap[child].untilUs) child++;
      if (heap[child].untilUs >= entry.untilUs) break;
      heap[i] = heap[child];
      heap[i].index = i;
      i = child;
    }
    heap[i] = entry;
    entry.index = i;
  }
}
