/**
 * The replicated table of rules: a last-writer-wins register per rule,
 * removals kept as tombstones for a bounded time, a digest that two
 * members compare to learn whether they agree, and slots in a stable order
 * for paged transfer.
 *
 * Slots are appended and never move while the table is not compacted: a
 * rule that changes keeps its slot, a removal turns its slot into a
 * tombstone, and only an expired tombstone leaves a hole. Holes are
 * compacted away when they are half the slots; a page cut across a
 * compaction may miss a rule, which the digest comparison afterwards finds.
 *
 * A block ({@link BlockedUntil}) is live until its instant, by this
 * member's wall clock, then held as a removal of the same version: it
 * leaves the digest on every member as each one's clock passes it, a copy
 * still in flight is the same version and changes nothing, and the removal
 * expires like any other. One that arrives already ended is a removal from
 * the start.
 *
 * @module
 */

import { keyHash64, PUBLIC_HASH_KEY } from "../hash.ts";
import {
  BlockedUntil,
  compareVersions,
  RULE_KINDS,
  type RuleEntry,
  ruleId,
  type RuleKind,
  versionMs,
} from "./entry.ts";
import { type Digest, entrySize, type Page } from "./wire.ts";

interface Slot {
  entry: RuleEntry;
  /** Where it is in `#order`. */
  index: number;
  /** Whether it is in the tombstone queue (once is enough: its turn comes no later). */
  queued: boolean;
}

/**
 * Slots by rule: a map of keys for each kind and class, so that the key
 * of a key limit, which its entry holds anyway, is also the map's key. A
 * rule ID string per slot would cost more than the rest of the slot.
 */
class SlotIndex {
  readonly #groups = new Map<string, Map<string, Slot>>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  get(kind: RuleKind, className: string, key: string): Slot | undefined {
    return this.#groups.get(`${RULE_KINDS[kind]}:${className}`)?.get(key);
  }

  /** Whether `slot` is the one held for its rule. */
  holds(slot: Slot): boolean {
    const { kind, className, key } = slot.entry;
    return this.get(kind, className, key) === slot;
  }

  add(slot: Slot): void {
    const { kind, className, key } = slot.entry;
    const group = `${RULE_KINDS[kind]}:${className}`;
    let slots = this.#groups.get(group);
    if (!slots) this.#groups.set(group, slots = new Map());
    if (!slots.has(key)) this.#size++;
    slots.set(key, slot);
  }

  delete(slot: Slot): void {
    const { kind, className, key } = slot.entry;
    const group = `${RULE_KINDS[kind]}:${className}`;
    const slots = this.#groups.get(group);
    if (slots?.get(key) !== slot) return;
    slots.delete(key);
    this.#size--;
    if (slots.size === 0) this.#groups.delete(group);
  }

  *values(): IterableIterator<Slot> {
    for (const slots of this.#groups.values()) yield* slots.values();
  }
}

/** What {@link RuleTable.merge} did with an entry. */
export type MergeOutcome = "newer" | "older" | "same" | "stale" | "full";

/** See the module doc. */
export class RuleTable {
  readonly #slots = new SlotIndex();
  #order: (Slot | undefined)[] = [];
  /** Tombstones in the order they were made here, for expiry. */
  #tombstones: Slot[] = [];
  #tombstoneHead = 0;
  /** Slots that held a block when it was set, a min-heap by its end; a slot changed since is skipped. */
  #blocks: { slot: Slot; untilMs: number }[] = [];
  #liveBlocks = 0;
  #holes = 0;
  #live = 0;
  #hi = 0;
  #lo = 0;
  readonly #maxEntries: number;
  readonly #tombstoneMs: number;

  /**
   * @param maxEntries Rules and tombstones held at most.
   * @param tombstoneMs How long, by the versions' clocks, a removal is kept.
   */
  constructor(maxEntries: number, tombstoneMs: number) {
    this.#maxEntries = maxEntries;
    this.#tombstoneMs = tombstoneMs;
  }

  /** Rules and tombstones held. */
  get size(): number {
    return this.#slots.size;
  }

  /** Slots, holes included: the end a page counts to. */
  get end(): number {
    return this.#order.length;
  }

  /** The table's digest: live rules and the XOR of their hashes. */
  digest(): Digest {
    return { live: this.#live, hi: this.#hi, lo: this.#lo };
  }

  /** The entry held for a rule, a tombstone included. */
  get(kind: RuleKind, className: string, key: string): RuleEntry | undefined {
    return this.#slots.get(kind, className, key)?.entry;
  }

  /** Every live rule. */
  *live(): IterableIterator<RuleEntry> {
    for (const slot of this.#slots.values()) if (slot.entry.value !== undefined) yield slot.entry;
  }

  /**
   * Takes `entry` if it is newer than what the table holds of its rule.
   * An entry older than the tombstone lifetime for a rule the table does
   * not hold is `stale` unless `learning`: it may be one whose removal
   * this table saw and has forgotten, and taking it would bring it back.
   *
   * @param entry The entry.
   * @param wallMs This member's wall clock, ms.
   * @param learning Whether this member is still learning the table (then it takes old rules too).
   * @returns What happened.
   */
  merge(entry: RuleEntry, wallMs: number, learning: boolean): MergeOutcome {
    if (entry.value instanceof BlockedUntil && entry.value.untilMs <= wallMs) {
      entry = { ...entry, value: undefined };
    }
    const slot = this.#slots.get(entry.kind, entry.className, entry.key);
    const old = wallMs - versionMs(entry.version) > this.#tombstoneMs;
    if (!slot) {
      if (old && (entry.value === undefined || !learning)) return "stale";
      if (this.#slots.size >= this.#maxEntries && !this.#evictTombstone()) return "full";
      const created: Slot = {
        entry,
        index: this.#order.length,
        queued: false,
      };
      this.#slots.add(created);
      this.#order.push(created);
      this.#settle(created, undefined);
      return "newer";
    }
    const order = compareVersions(entry.version, slot.entry.version);
    if (order <= 0) return order === 0 ? "same" : "older";
    const before = slot.entry;
    slot.entry = entry;
    this.#settle(slot, before);
    return "newer";
  }

  /**
   * Drops tombstones older than the lifetime, by `wallMs`.
   *
   * @param wallMs This member's wall clock, ms.
   * @returns How many it dropped.
   */
  expire(wallMs: number): number {
    this.#endBlocks(wallMs);
    let dropped = 0;
    while (this.#tombstoneHead < this.#tombstones.length) {
      const slot = this.#tombstones[this.#tombstoneHead];
      const current = this.#slots.holds(slot) && slot.entry.value === undefined;
      if (current && wallMs - versionMs(slot.entry.version) <= this.#tombstoneMs) break;
      this.#tombstoneHead++;
      slot.queued = false;
      if (current) {
        this.#remove(slot);
        dropped++;
      }
    }
    this.#trimQueue();
    return dropped;
  }

  /**
   * The entries of slots from `from` on that fit in `maxBytes`.
   *
   * @param from The first slot.
   * @param maxBytes Room for entries, bytes.
   * @returns The page; `next` is `end` when it is the last.
   */
  page(from: number, maxBytes: number): Omit<Page, "ticket"> {
    const entries: RuleEntry[] = [];
    const start = Math.min(from, this.#order.length);
    let at = start;
    for (; at < this.#order.length; at++) {
      const slot = this.#order[at];
      if (!slot) continue;
      const size = entrySize(slot.entry);
      if (size > maxBytes) break;
      maxBytes -= size;
      entries.push(slot.entry);
    }
    return { from: start, next: at, end: this.#order.length, entries };
  }

  /** Turns the blocks that ended by `wallMs` into removals of the same version. */
  #endBlocks(wallMs: number): void {
    const heap = this.#blocks;
    while (heap.length > 0 && heap[0].untilMs <= wallMs) {
      const { slot, untilMs } = popMin(heap);
      const value = slot.entry.value;
      if (!this.#slots.holds(slot) || !(value instanceof BlockedUntil)) continue;
      if (value.untilMs !== untilMs) continue;
      const before = slot.entry;
      slot.entry = { ...before, value: undefined };
      this.#settle(slot, before);
    }
    // Blocks replaced or lifted before their end leave heap entries behind: rebuild past twice the live ones.
    if (heap.length > 2 * this.#liveBlocks + 64) {
      const live = heap.filter(({ slot, untilMs }) =>
        this.#slots.holds(slot) && slot.entry.value instanceof BlockedUntil &&
        slot.entry.value.untilMs === untilMs
      );
      this.#blocks = [];
      for (const item of live) pushMin(this.#blocks, item);
    }
  }

  /** Accounts for a slot whose entry became `slot.entry` (from `before`). */
  #settle(slot: Slot, before: RuleEntry | undefined): void {
    if (before?.value instanceof BlockedUntil) this.#liveBlocks--;
    if (slot.entry.value instanceof BlockedUntil) {
      this.#liveBlocks++;
      pushMin(this.#blocks, { slot, untilMs: slot.entry.value.untilMs });
    }
    if (before?.value !== undefined) {
      this.#live--;
      this.#flip(before);
    }
    const entry = slot.entry;
    if (entry.value === undefined) {
      if (!slot.queued) this.#tombstones.push(slot);
      slot.queued = true;
      return;
    }
    this.#live++;
    this.#flip(entry);
  }

  /**
   * XORs a live entry's hash into the digest, or out of it. Hashed again
   * when it goes rather than kept: two numbers a slot, boxed, would cost
   * more than the hash does.
   */
  #flip(entry: RuleEntry): void {
    const v = entry.version;
    const id = ruleId(entry.kind, entry.className, entry.key);
    const h = keyHash64(PUBLIC_HASH_KEY, id, `${v.clock}:${v.origin.hi}:${v.origin.lo}`);
    // Unsigned, as the wire carries them: a digest compares equal to its decoded copy.
    this.#hi = (this.#hi ^ h.hi) >>> 0;
    this.#lo = (this.#lo ^ h.lo) >>> 0;
  }

  /** Makes room for a rule by dropping the oldest tombstone, if there is one. */
  #evictTombstone(): boolean {
    while (this.#tombstoneHead < this.#tombstones.length) {
      const slot = this.#tombstones[this.#tombstoneHead++];
      slot.queued = false;
      if (this.#slots.holds(slot) && slot.entry.value === undefined) {
        this.#remove(slot);
        this.#trimQueue();
        return true;
      }
    }
    return false;
  }

  #remove(slot: Slot): void {
    this.#slots.delete(slot);
    this.#order[slot.index] = undefined;
    if (++this.#holes * 2 > this.#order.length && this.#holes > 64) this.#compact();
  }

  #compact(): void {
    const order: Slot[] = [];
    for (const slot of this.#order) {
      if (!slot) continue;
      slot.index = order.length;
      order.push(slot);
    }
    this.#order = order;
    this.#holes = 0;
  }

  /** Forgets the queue's spent head once it is most of it, so the queue stays bounded. */
  #trimQueue(): void {
    if (this.#tombstoneHead > 1_024 && this.#tombstoneHead * 2 > this.#tombstones.length) {
      this.#tombstones = this.#tombstones.slice(this.#tombstoneHead);
      this.#tombstoneHead = 0;
    }
  }
}

/** Adds `item` to the min-heap `heap` by `untilMs`. */
function pushMin<T extends { untilMs: number }>(heap: T[], item: T): void {
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
function popMin<T extends { untilMs: number }>(heap: T[]): T {
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
