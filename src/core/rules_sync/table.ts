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
 * A class's removal removes its key limits with it, as one rule: each key
 * limit of the class older than the removal is held as a removal of the
 * same version, whether it was here before the class's removal or arrives
 * after it, so every member holds the same whatever the order.
 *
 * Room is kept for the fleet's own changes. Each entry is counted by whose
 * version it is, as it arrives: this member's own, a live member's, or a
 * stranger's (an origin that is no member here: a departed member's, or a
 * forger's). Strangers' entries take at most the bound less a reserve,
 * which is room for members' changes: with signing off, a forger stamping
 * its own origins fills the strangers' room, never the reserve, so a
 * change made on a member still reaches every member. No live entry is
 * evicted for room, only tombstones, and an entry gives up only those of
 * its side or below (stranger, member, own): nothing a stranger sends
 * pushes out a rule set here. A refusal for room leaves the table full,
 * which it says ({@link RuleTable.full}) until a slot is freed.
 *
 * Why this file is over 400 lines: it is one table. Its slots are columns
 * private to {@link RuleTable}, and every method keeps the same invariants
 * over them at once: the digest (the XOR of live slots' hashes), the count
 * of entries by side, the tombstone queues, the heap of blocks and the map
 * of keys, which compaction renumbers together. Merging, expiry, room and
 * paging each move several of these; split apart, each part would write
 * columns another owns. What stands apart from the slots, the queues in
 * time order, is `table_queues.ts`; an entry's bytes are `entry_wire.ts`'s.
 *
 * @module
 */

import { keyHash64, PUBLIC_HASH_KEY } from "../hash.ts";
import {
  BlockedUntil,
  clockMs,
  compareVersionParts,
  compareVersions,
  type Origin,
  RULE_KINDS,
  type RuleEntry,
  ruleId,
  type RuleKind,
  type RuleValue,
  type Version,
} from "./entry.ts";
import { entrySize } from "./entry_wire.ts";
import type { Digest, Page } from "./wire.ts";
import { popMin, pushMin, SlotQueue } from "./table_queues.ts";

/**
 * The slots of one kind and class, by key: the key of a key limit, which
 * the slot holds anyway, is also the map's key, so no rule ID string is
 * kept per slot.
 */
interface Group {
  readonly kind: RuleKind;
  readonly className: string;
  /** Slot numbers by key. */
  readonly slots: Map<string, number>;
}

/** A block's slot and end, in the heap of blocks by end (`slot` -1: since removed). */
interface BlockEnd {
  slot: number;
  readonly untilMs: number;
}

/** Whose an entry's version is: a stranger's, a live member's, this member's own. */
type Side = 0 | 1 | 2;
const STRANGER = 0, MEMBER = 1, OWN = 2;

/** What {@link RuleTable.merge} did with an entry. */
export type MergeOutcome = "newer" | "older" | "same" | "stale" | "full";

/**
 * See the module doc. A slot is a number, and what it holds lives in
 * columns, typed where they are numbers, not in objects of its own: an
 * entry, its version and a slot object were some 150 bytes a rule, more
 * than the columns and the map of keys together (the memory column of
 * docs/fleet-rules.md). Entries are made afresh when asked for.
 */
export class RuleTable {
  readonly #groups = new Map<string, Group>();
  #size = 0;
  /** Slots used, holes included. */
  #end = 0;
  /** By slot: its group, or undefined for a hole. */
  #group: (Group | undefined)[] = [];
  #key: string[] = [];
  #value: (RuleValue | undefined)[] = [];
  #clock = new Float64Array(16);
  #originHi = new Uint32Array(16);
  #originLo = new Uint32Array(16);
  /** Whether the slot is in a tombstone queue (once is enough: its turn comes no later). */
  #queued = new Uint8Array(16);
  /** By slot: whose version it holds, as it arrived ({@link Side}). */
  #side = new Uint8Array(16);
  /** Entries by side. */
  readonly #sides = [0, 0, 0];
  /** Whether a rule was refused for room since a slot was last freed. */
  #refusedFull = false;
  /**
   * Slots of tombstones in the order they were made here, for expiry: a
   * queue by side, so that room for a stranger's entry is found among
   * strangers' tombstones at once.
   */
  readonly #tombstones = [new SlotQueue(), new SlotQueue(), new SlotQueue()] as const;
  /** Slots that held a block when it was set, a min-heap by its end; a slot changed since is skipped. */
  #blocks: BlockEnd[] = [];
  #liveBlocks = 0;
  #holes = 0;
  /** The newest clock of a removal this table has let go: a rule not held, no newer, may be one of them. */
  #forgottenClock = 0;
  #live = 0;
  #hi = 0;
  #lo = 0;
  readonly #maxEntries: number;
  readonly #tombstoneMs: number;
  readonly #self: Origin | undefined;
  readonly #reserved: number;
  readonly #isMember: (origin: Origin) => boolean;

  /**
   * @param maxEntries Rules and tombstones held at most.
   * @param tombstoneMs How long, by the versions' clocks, a removal is kept.
   * @param sides Who this member is, which origins are live members, and
   *   the entries kept for members' changes (strangers' entries take at
   *   most `maxEntries - reservedEntries`); without it, every entry is a
   *   member's and none are kept.
   */
  constructor(
    maxEntries: number,
    tombstoneMs: number,
    sides?: {
      readonly self: Origin;
      readonly isMember: (origin: Origin) => boolean;
      readonly reservedEntries: number;
    },
  ) {
    this.#maxEntries = maxEntries;
    this.#tombstoneMs = tombstoneMs;
    this.#self = sides?.self;
    this.#isMember = sides?.isMember ?? (() => true);
    this.#reserved = Math.min(maxEntries, sides?.reservedEntries ?? 0);
  }

  /** Rules and tombstones held. */
  get size(): number {
    return this.#size;
  }

  /** Rules and tombstones held at most. */
  get bound(): number {
    return this.#maxEntries;
  }

  /** Entries kept for members' changes: strangers' take at most the rest. */
  get reserved(): number {
    return this.#reserved;
  }

  /** Entries, tombstones included, whose version this member stamped. */
  get own(): number {
    return this.#sides[OWN];
  }

  /** Entries whose origin was no member here when they came. */
  get strangers(): number {
    return this.#sides[STRANGER];
  }

  /** Whether a rule was refused for room and no slot has been freed since. */
  get full(): boolean {
    return this.#refusedFull;
  }

  /** Says the table is full: a change made here was refused for room before it was made. */
  markFull(): void {
    this.#refusedFull = true;
  }

  /**
   * Whether a change made here to a rule would find room on the fleet's
   * other members, whose tables hold what this one does (the digests
   * agree) and to whom it is a peer's entry: the rule is held already, or
   * the whole table is within the peers' room, or there is a tombstone to
   * give up.
   */
  hasRoomShared(kind: RuleKind, className: string, key: string): boolean {
    return this.newRules([{ kind, className, key }]) <= this.roomShared;
  }

  /** New rules the fleet's other members can take from this one: free peers' room and tombstones. */
  get roomShared(): number {
    return Math.max(0, this.#maxEntries - this.#size) + this.#size - this.#live;
  }

  /** How many of `rules` the table does not hold (each would take an entry). */
  newRules(rules: Iterable<Pick<RuleEntry, "kind" | "className" | "key">>): number {
    let count = 0;
    for (const r of rules) if (this.#slotOf(r.kind, r.className, r.key) === undefined) count++;
    return count;
  }

  /** The newest clock of a removal let go (0: none): see {@link RuleTable.merge}. */
  get forgottenClock(): number {
    return this.#forgottenClock;
  }

  /** Slots, holes included: the end a page counts to. */
  get end(): number {
    return this.#end;
  }

  /** The table's digest: live rules and the XOR of their hashes. */
  digest(): Digest {
    return { live: this.#live, hi: this.#hi, lo: this.#lo };
  }

  /** The entry held for a rule, a tombstone included. */
  get(kind: RuleKind, className: string, key: string): RuleEntry | undefined {
    const slot = this.#slotOf(kind, className, key);
    return slot === undefined ? undefined : this.#entry(slot);
  }

  /** Every live rule, in slot order. */
  *live(): IterableIterator<RuleEntry> {
    for (let slot = 0; slot < this.#end; slot++) {
      if (this.#group[slot] !== undefined && this.#value[slot] !== undefined) {
        yield this.#entry(slot);
      }
    }
  }

  /** The live rules of one kind and class (the key limits of a class, say). */
  *liveOf(kind: RuleKind, className: string): IterableIterator<RuleEntry> {
    const group = this.#groups.get(`${RULE_KINDS[kind]}:${className}`);
    if (!group) return;
    for (const slot of group.slots.values()) {
      if (this.#value[slot] !== undefined) yield this.#entry(slot);
    }
  }

  /**
   * Takes `entry` if it is newer than what the table holds of its rule.
   * An entry for a rule the table does not hold is `stale` when it is no
   * newer than the newest removal this table has forgotten (expired or
   * evicted): it may be one of those, and taking it would bring it back.
   * What decides is what this table knows, not the entry's age by the wall
   * clock: a member that starts afresh has forgotten nothing, and takes a
   * rule set long ago as readily as one set now.
   *
   * @param entry The entry.
   * @param wallMs This member's wall clock, ms.
   * @returns What happened.
   */
  merge(entry: RuleEntry, wallMs: number): MergeOutcome {
    let value = entry.value;
    if (value instanceof BlockedUntil && value.untilMs <= wallMs) value = undefined;
    let version = entry.version;
    // A key limit older than its class's removal was removed with the class:
    // held as that removal, so that every member holds it so whenever it arrives.
    const removal = entry.kind === "keyLimit" ? this.#classRemoval(entry.className) : undefined;
    const superseded = removal !== undefined && compareVersions(version, removal) < 0;
    if (superseded) [value, version] = [undefined, removal];
    const slot = this.#slotOf(entry.kind, entry.className, entry.key);
    if (slot === undefined) {
      if (version.clock <= this.#forgottenClock) return "stale";
      if (!this.#room(this.#sideOf(version.origin))) {
        this.#refusedFull = true;
        return "full";
      }
      this.#enter(this.#append(entry), value, version);
      return superseded ? "older" : "newer";
    }
    const order = compareVersionParts(
      version,
      this.#clock[slot],
      this.#originHi[slot],
      this.#originLo[slot],
    );
    if (order <= 0) return order === 0 && !superseded ? "same" : "older";
    this.#leave(slot);
    this.#enter(slot, value, version);
    if (entry.kind === "class" && value === undefined) {
      this.#removeKeyLimits(entry.className, version);
    }
    return superseded ? "older" : "newer";
  }

  /** The version of `className`'s removal, when the table holds its class as removed. */
  #classRemoval(className: string): Version | undefined {
    const slot = this.#slotOf("class", className, "");
    return slot === undefined || this.#value[slot] !== undefined ? undefined : this.#version(slot);
  }

  /** Turns the key limits of a class older than its removal at `version` into that removal. */
  #removeKeyLimits(className: string, version: Version): void {
    const group = this.#groups.get(`${RULE_KINDS.keyLimit}:${className}`);
    if (!group) return;
    for (const slot of group.slots.values()) {
      const order = compareVersionParts(
        version,
        this.#clock[slot],
        this.#originHi[slot],
        this.#originLo[slot],
      );
      if (order <= 0) continue;
      this.#leave(slot);
      this.#enter(slot, undefined, version);
    }
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
    for (const queue of this.#tombstones) {
      for (let slot = queue.peek(); slot !== undefined; slot = queue.peek()) {
        const current = this.#group[slot] !== undefined && this.#value[slot] === undefined;
        if (current && wallMs - clockMs(this.#clock[slot]) <= this.#tombstoneMs) break;
        // Off the queue before it is forgotten: forgetting may compact, which remaps the queue.
        queue.shift();
        this.#queued[slot] = 0;
        if (current) {
          this.#forget(slot);
          dropped++;
        }
      }
    }
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
    const start = Math.min(from, this.#end);
    let at = start;
    for (; at < this.#end; at++) {
      if (this.#group[at] === undefined) continue;
      const entry = this.#entry(at);
      const size = entrySize(entry);
      if (size > maxBytes) break;
      maxBytes -= size;
      entries.push(entry);
    }
    return { from: start, next: at, end: this.#end, entries };
  }

  #slotOf(kind: RuleKind, className: string, key: string): number | undefined {
    return this.#groups.get(`${RULE_KINDS[kind]}:${className}`)?.slots.get(key);
  }

  /** The entry a slot holds, made afresh. */
  #entry(slot: number): RuleEntry {
    const { kind, className } = this.#group[slot]!;
    const version = this.#version(slot);
    return { kind, className, key: this.#key[slot], value: this.#value[slot], version };
  }

  #version(slot: number): Version {
    return {
      clock: this.#clock[slot],
      origin: { hi: this.#originHi[slot], lo: this.#originLo[slot] },
    };
  }

  /** A new slot for `entry`'s rule, holding nothing yet (`#enter` fills it). */
  #append(entry: RuleEntry): number {
    const name = `${RULE_KINDS[entry.kind]}:${entry.className}`;
    let group = this.#groups.get(name);
    if (!group) {
      group = { kind: entry.kind, className: entry.className, slots: new Map() };
      this.#groups.set(name, group);
    }
    const slot = this.#end++;
    if (slot === this.#clock.length) this.#grow(2 * slot);
    group.slots.set(entry.key, slot);
    this.#side[slot] = STRANGER;
    this.#sides[STRANGER]++;
    this.#group[slot] = group;
    this.#key[slot] = entry.key;
    this.#value[slot] = undefined;
    this.#size++;
    return slot;
  }

  #grow(capacity: number): void {
    const clock = new Float64Array(capacity), hi = new Uint32Array(capacity);
    const lo = new Uint32Array(capacity), queued = new Uint8Array(capacity);
    const own = new Uint8Array(capacity);
    const n = Math.min(this.#end, capacity);
    clock.set(this.#clock.subarray(0, n));
    hi.set(this.#originHi.subarray(0, n));
    lo.set(this.#originLo.subarray(0, n));
    queued.set(this.#queued.subarray(0, n));
    own.set(this.#side.subarray(0, n));
    [this.#clock, this.#originHi, this.#originLo, this.#queued] = [clock, hi, lo, queued];
    this.#side = own;
  }

  /** Takes a slot's content out of the digest and the count of blocks. */
  #leave(slot: number): void {
    const value = this.#value[slot];
    if (value instanceof BlockedUntil) this.#liveBlocks--;
    if (value !== undefined) {
      this.#live--;
      this.#flip(slot);
    }
  }

  /** Makes `value` at `version` a slot's content, and accounts for it. */
  #enter(slot: number, value: RuleValue | undefined, version: Version): void {
    this.#value[slot] = value;
    this.#clock[slot] = version.clock;
    this.#originHi[slot] = version.origin.hi;
    this.#originLo[slot] = version.origin.lo;
    const side = this.#sideOf(version.origin);
    this.#sides[this.#side[slot]]--;
    this.#sides[side]++;
    this.#side[slot] = side;
    if (value instanceof BlockedUntil) {
      this.#liveBlocks++;
      pushMin(this.#blocks, { slot, untilMs: value.untilMs });
    }
    if (value === undefined) {
      if (!this.#queued[slot]) this.#tombstones[side].push(slot);
      this.#queued[slot] = 1;
      return;
    }
    this.#live++;
    this.#flip(slot);
  }

  /** Whether a slot holds, since its block was set, the block that ends at `untilMs`. */
  #blocking(slot: number, untilMs: number): boolean {
    const value = slot < 0 ? undefined : this.#value[slot];
    return value instanceof BlockedUntil && value.untilMs === untilMs;
  }

  /** Turns the blocks that ended by `wallMs` into removals of the same version. */
  #endBlocks(wallMs: number): void {
    const heap = this.#blocks;
    while (heap.length > 0 && heap[0].untilMs <= wallMs) {
      const { slot, untilMs } = popMin(heap);
      if (!this.#blocking(slot, untilMs)) continue;
      const version = this.#version(slot);
      this.#leave(slot);
      this.#enter(slot, undefined, version);
    }
    // Blocks replaced or lifted before their end leave heap entries behind: rebuild past twice the live ones.
    if (heap.length > 2 * this.#liveBlocks + 64) {
      const live = heap.filter(({ slot, untilMs }) => this.#blocking(slot, untilMs));
      this.#blocks = [];
      for (const item of live) pushMin(this.#blocks, item);
    }
  }

  /**
   * XORs a live slot's hash into the digest, or out of it. Hashed again
   * when it goes rather than kept: two more numbers a slot would cost more
   * than the hash does.
   */
  #flip(slot: number): void {
    const { kind, className } = this.#group[slot]!;
    const id = ruleId(kind, className, this.#key[slot]);
    const version = `${this.#clock[slot]}:${this.#originHi[slot]}:${this.#originLo[slot]}`;
    const h = keyHash64(PUBLIC_HASH_KEY, id, version);
    // Unsigned, as the wire carries them: a digest compares equal to its decoded copy.
    this.#hi = (this.#hi ^ h.hi) >>> 0;
    this.#lo = (this.#lo ^ h.lo) >>> 0;
  }

  #sideOf(origin: Origin): Side {
    const self = this.#self;
    if (self !== undefined && origin.hi === self.hi && origin.lo === self.lo) return OWN;
    return this.#isMember(origin) ? MEMBER : STRANGER;
  }

  /**
   * Finds room for a new rule of `side`: a free slot within its side's
   * bound, or else a tombstone of its side or below given up, the lowest
   * side's first (see the module doc).
   */
  #room(side: Side): boolean {
    const free = this.#size < this.#maxEntries;
    if (side !== STRANGER && free) return true;
    if (free && this.#sides[STRANGER] < this.#maxEntries - this.#reserved) return true;
    for (let q = STRANGER; q <= side; q++) if (this.#evictTombstone(q as Side)) return true;
    return false;
  }

  /**
   * Makes room by dropping the oldest tombstone of side `q`, if it has one.
   * A slot whose side changed since it was queued (a newer removal from
   * another side) moves to its side's queue.
   */
  #evictTombstone(q: Side): boolean {
    const queue = this.#tombstones[q];
    for (let slot = queue.peek(); slot !== undefined; slot = queue.peek()) {
      queue.shift();
      this.#queued[slot] = 0;
      if (this.#group[slot] === undefined || this.#value[slot] !== undefined) continue;
      if (this.#side[slot] !== q) {
        this.#tombstones[this.#side[slot]].push(slot);
        this.#queued[slot] = 1;
        continue;
      }
      this.#forget(slot);
      return true;
    }
    return false;
  }

  /** Lets a tombstone go, and remembers that a rule no newer than it may be one removed. */
  #forget(slot: number): void {
    this.#forgottenClock = Math.max(this.#forgottenClock, this.#clock[slot]);
    this.#remove(slot);
  }

  #remove(slot: number): void {
    const group = this.#group[slot]!;
    group.slots.delete(this.#key[slot]);
    this.#sides[this.#side[slot]]--;
    this.#side[slot] = STRANGER;
    this.#refusedFull = false;
    if (group.slots.size === 0) this.#groups.delete(`${RULE_KINDS[group.kind]}:${group.className}`);
    this.#group[slot] = undefined;
    this.#key[slot] = "";
    this.#value[slot] = undefined;
    this.#size--;
    if (++this.#holes * 2 > this.#end && this.#holes > 64) this.#compact();
  }

  /** Moves the slots down over the holes, and the queue and heap with them. */
  #compact(): void {
    const moved = new Int32Array(this.#end).fill(-1);
    let to = 0;
    for (let from = 0; from < this.#end; from++) {
      const group = this.#group[from];
      if (group === undefined) continue;
      moved[from] = to;
      group.slots.set(this.#key[from], to);
      this.#group[to] = group;
      this.#key[to] = this.#key[from];
      this.#value[to] = this.#value[from];
      this.#clock[to] = this.#clock[from];
      this.#originHi[to] = this.#originHi[from];
      this.#originLo[to] = this.#originLo[from];
      this.#queued[to] = this.#queued[from];
      this.#side[to] = this.#side[from];
      to++;
    }
    this.#group.length =
      this.#key.length =
      this.#value.length =
      this.#end =
        to;
    if (4 * to < this.#clock.length) this.#grow(Math.max(16, 2 * to));
    for (const queue of this.#tombstones) queue.remap(moved);
    // In place, so the heap stays one: a removed slot's block is skipped when it comes up.
    for (const item of this.#blocks) item.slot = item.slot < 0 ? -1 : moved[item.slot];
    this.#holes = 0;
  }
}
