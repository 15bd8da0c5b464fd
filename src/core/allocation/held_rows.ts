/**
 * What a node reads of each demand report it holds to tell whether a group
 * heard is a copy of it, side by side in typed arrays by the report's place
 * in the relay's turn: most groups a node hears are copies, and a large
 * simulated fleet's time went into finding the report object (by its
 * origin's low half, in a `Map` whose keys above 2^30 are boxed numbers) and
 * reading it, each time from memory the other nodes had long since pushed
 * out of the cache. Here a copy costs a probe of an open-addressed table
 * and one row.
 *
 * @module
 */

/** Numbers in a row: origin hi, origin lo, life, round, age, when it came; two spare. */
const ROW = 8;
const HI = 0;
const LO = 1;
const LIFE = 2;
const ROUND = 3;
const AGE = 4;
const RECEIVED = 5;

/**
 * The numbers of a report a row holds, the shape the row is made of: a held
 * report (`HeardReport`) is one of these with its bytes and demands.
 */
export interface ReportRow {
  /** The origin's ID, high half, as a report on the wire names it. */
  readonly originHi: number;
  /** The origin's ID, low half. */
  readonly originLo: number;
  /** Which life of the origin made it. */
  readonly life: number;
  /** Its round in that life. */
  readonly round: number;
  /** Its age when it came. */
  readonly ageMs: number;
  /** When it came, in this node's time. */
  readonly receivedMs: number;
}

/** Reports by their origin's low half, one each, and a row of each by place. */
export class HeldRows {
  /**
   * Open addressing, linear probing, two numbers a slot side by side: an
   * origin's low half, and the place of the report there plus one (0: an
   * empty slot).
   */
  #slots = new Int32Array(2 * 32);
  #indexed = 0;
  #rows = new Float64Array(16 * ROW);

  /** The place of the report indexed under low half `lo`, or -1. */
  find(lo: number): number {
    const slots = this.#slots;
    const mask = slots.length / 2 - 1;
    for (let slot = hashOf(lo) & mask;; slot = (slot + 1) & mask) {
      const place = slots[2 * slot + 1];
      if (place === 0) return -1;
      if (slots[2 * slot] === (lo | 0)) return place - 1;
    }
  }

  /** Indexes the report at `place` under `lo`, unless one is indexed there already. */
  index(lo: number, place: number): void {
    if (this.find(lo) >= 0) return;
    if (4 * (this.#indexed + 1) > this.#slots.length) this.#grow();
    this.#put(lo, place);
  }

  /** Indexes again, from nothing: each place's low half in order, the first of a low half kept. */
  reindex(lows: readonly number[]): void {
    this.#slots.fill(0);
    this.#indexed = 0;
    lows.forEach((lo, place) => this.index(lo, place));
  }

  /** Sets the row at `place`. */
  set(place: number, report: ReportRow): void {
    if ((place + 1) * ROW > this.#rows.length) {
      const rows = new Float64Array(2 * this.#rows.length);
      rows.set(this.#rows);
      this.#rows = rows;
    }
    const rows = this.#rows;
    const at = place * ROW;
    rows[at + HI] = report.originHi;
    rows[at + LO] = report.originLo;
    rows[at + LIFE] = report.life;
    rows[at + ROUND] = report.round;
    rows[at + AGE] = report.ageMs;
    rows[at + RECEIVED] = report.receivedMs;
  }

  /** The origin's high half of the report at `place`. */
  hiAt(place: number): number {
    return this.#rows[place * ROW + HI];
  }

  /** Whether the report at `place` is of the origin `id`. */
  isOrigin(place: number, id: { readonly hi: number; readonly lo: number }): boolean {
    const at = place * ROW;
    return this.#rows[at + HI] === id.hi && this.#rows[at + LO] === id.lo;
  }

  /** How old the report at `place` is at `nowMs`, a ms older than it came at least: its age when relayed. */
  relayAgeMs(place: number, nowMs: number): number {
    const rows = this.#rows;
    const at = place * ROW;
    return Math.max(rows[at + AGE] + (nowMs - rows[at + RECEIVED]), rows[at + AGE] + 1);
  }

  /**
   * Whether a group of `life` and `round` changes nothing while the report
   * at `place` is of that life, of that round or a later one, and believed
   * (no older than `believedMs` at `nowMs`): the test of `HeardReports`,
   * in its arithmetic.
   */
  holdsNewer(
    place: number,
    group: { readonly life: number; readonly round: number },
    nowMs: number,
    believedMs: number,
  ): boolean {
    const rows = this.#rows;
    const at = place * ROW;
    return rows[at + LIFE] === group.life && group.round <= rows[at + ROUND] &&
      rows[at + AGE] + (nowMs - rows[at + RECEIVED]) <= believedMs;
  }

  #put(lo: number, place: number): void {
    const slots = this.#slots;
    const mask = slots.length / 2 - 1;
    let slot = hashOf(lo) & mask;
    while (slots[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
    slots[2 * slot] = lo;
    slots[2 * slot + 1] = place + 1;
    this.#indexed++;
  }

  #grow(): void {
    const old = this.#slots;
    this.#slots = new Int32Array(2 * old.length);
    this.#indexed = 0;
    for (let slot = 0; 2 * slot < old.length; slot++) {
      if (old[2 * slot + 1] !== 0) this.#put(old[2 * slot], old[2 * slot + 1] - 1);
    }
  }
}

/** Spreads low halves over the slots (IDs are hashes already; this mixes their low bits). */
function hashOf(lo: number): number {
  return Math.imul(lo ^ (lo >>> 16), 0x45d9f3b) >>> 0;
}
