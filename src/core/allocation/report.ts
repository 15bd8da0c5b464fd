/**
 * Demand reports on the wire: the bytes the allocator puts on probes and
 * acks through the membership extension. A section is a list of groups,
 * each one node's whole hot set at one of its rounds: absolute demands,
 * never deltas, so a lost datagram costs a period of accuracy and nothing
 * more, and a newer round simply replaces an older one.
 *
 * Layout, big-endian:
 *
 * ```
 * u8 version (2)   u8 group count
 * per group:  u32 origin id hi, u32 origin id lo, u32 origin life, u32 round,
 *             u32 age (ms), u8 flags, u8 record count
 * per record: u32 key hash hi, u32 key hash lo, f32 demand (requests a second)
 * ```
 *
 * A group names the life of its origin (the nonzero number a process draws
 * at start, which membership carries too) and its round in that life:
 * within a life, a higher round is newer; a report of another life than
 * the one membership knows is not taken at all, so a process started again
 * at the same address supersedes its earlier life whatever their rounds.
 * The age is how long ago the origin made the report, as the nodes that
 * relayed it held it: a report is believed for a bounded time (see the
 * allocator), so one forged report at the highest round cannot pin an
 * order the origin's real reports never pass.
 *
 * The version is append-only: a new layout takes a new number (1 carried
 * the origin's incarnation where 2 carries its life, and no age, so 0.1's
 * reports are skipped by 0.2), and a node skips a section whose version it
 * does not know. Flag bits are reserved and must be zero. Since the
 * membership extension holds one section, a later release sends version 2
 * here for as long as a 0.2 node may hear it, and any new layout in a
 * membership section of its own (see `proto/codec.ts`; version 2 is pinned
 * by `tests/fixtures/wire/0.2/`).
 *
 * @module
 */

import { checkOption, GUARD_BOUNDS } from "../options.ts";
import type { Hash64 } from "../hash.ts";
import { getF32, getU32 } from "../../proto/bytes.ts";

/** The version of the demand section, its first byte. */
const REPORT_VERSION = 2;
/** A node coordinates at most this many keys, so a group has at most this many records. */
export const MAX_RECORDS_PER_GROUP = 64;
/** Bytes of the section header. */
export const SECTION_HEADER_BYTES = 2;
/** Groups one section holds at most: their count is one byte of the header. */
export const MAX_GROUPS_PER_SECTION = 255;
/** Bytes of a group header. */
export const GROUP_HEADER_BYTES = 22;
/** Bytes of a record. */
export const RECORD_BYTES = 12;
/** The largest demand a record carries: f32 is finite up to ~3.4e38, far beyond any rate. */
const MAX_DEMAND = 1e12;

/** One key's demand at the origin. */
export interface DemandRecord {
  /** The key's 64-bit hash. */
  readonly hash: Hash64;
  /** Requests a second at the origin, smoothed. */
  readonly demand: number;
}

/** One node's hot set at one of its rounds. */
export interface DemandGroup {
  /** The reporting node's member ID. */
  readonly origin: { readonly hi: number; readonly lo: number };
  /** Which life of the origin: see `Sender.life`. */
  readonly life: number;
  /** Its round, counted from its start. */
  readonly round: number;
  /** Milliseconds since the origin made it, as the nodes that relayed it count; a u32. */
  readonly ageMs: number;
  /** Its hot keys and their demand; complete, so a key left out is no longer hot there. */
  readonly records: readonly DemandRecord[];
}

/**
 * Validates `hotKeys`, the keys a node coordinates at once: its whole hot
 * set goes in one group, so at most {@link MAX_RECORDS_PER_GROUP}.
 */
export function checkHotKeys(n: number): number {
  return checkOption("hotKeys", n);
}

// A node's demand report lists its whole hot set in one group: a hot set
// larger than a group holds could never be reported. Checked at load.
if (GUARD_BOUNDS.hotKeys.max !== MAX_RECORDS_PER_GROUP) {
  throw new Error(
    `hotKeys' bound (${GUARD_BOUNDS.hotKeys.max}) must equal MAX_RECORDS_PER_GROUP (${MAX_RECORDS_PER_GROUP})`,
  );
}

/**
 * The group cut to what fits in a section of `maxBytes` with nothing else:
 * the records of highest demand first, as those weigh most in the peers'
 * sums; `undefined` when not even an empty group fits. `cut` counts the
 * records left out. A peer takes a key left out as not hot here, so a cut
 * costs accuracy: better than no report at all, and counted so it shows.
 */
export function fitGroup(
  group: DemandGroup,
  maxBytes: number,
): { readonly group: DemandGroup | undefined; readonly cut: number } {
  const room = Math.min(
    MAX_RECORDS_PER_GROUP,
    Math.floor((maxBytes - SECTION_HEADER_BYTES - GROUP_HEADER_BYTES) / RECORD_BYTES),
  );
  const n = group.records.length;
  if (room < 0) return { group: undefined, cut: n };
  if (n <= room) return { group, cut: 0 };
  const records = [...group.records].sort((a, b) => b.demand - a.demand).slice(0, room);
  return { group: { ...group, records }, cut: n - room };
}

/** The size of a group with `records` records. */
export function groupBytes(records: number): number {
  return GROUP_HEADER_BYTES + records * RECORD_BYTES;
}

/**
 * A group held to be passed on as it came: its bytes, and the age to send
 * it with (which replaces the age in them).
 */
export interface RelayedGroup {
  /** The group's bytes as received: header and records. */
  readonly bytes: Uint8Array;
  /** Milliseconds since its origin made it, as of sending. */
  readonly ageMs: number;
}

/** Where a group's age sits in its header. */
const AGE_OFFSET = 16;

/**
 * Encodes groups into one section; the caller keeps it within its budget with {@link groupBytes}.
 *
 * @param groups Demand reports grouped by origin.
 * @param relayed Groups to pass on as they came, after `groups`.
 * @returns The extension's bytes.
 */
export function encodeReports(
  groups: readonly DemandGroup[],
  relayed: readonly RelayedGroup[] = [],
): Uint8Array {
  const count = groups.length + relayed.length;
  if (count > MAX_GROUPS_PER_SECTION) {
    throw new RangeError(`at most ${MAX_GROUPS_PER_SECTION} groups in a section, got ${count}`);
  }
  let size = SECTION_HEADER_BYTES;
  for (const g of groups) size += groupBytes(g.records.length);
  for (const r of relayed) size += r.bytes.length;
  // The view over a buffer made for it: in JavaScriptCore a typed array
  // asked for its `buffer` moves its bytes out of the heap first.
  const buffer = new ArrayBuffer(size);
  const bytes = new Uint8Array(buffer);
  const view = new DataView(buffer);
  view.setUint8(0, REPORT_VERSION);
  view.setUint8(1, count);
  let at = SECTION_HEADER_BYTES;
  for (const g of groups) {
    if (g.records.length > MAX_RECORDS_PER_GROUP) {
      throw new RangeError(
        `at most ${MAX_RECORDS_PER_GROUP} records in a group, got ${g.records.length}`,
      );
    }
    view.setUint32(at, g.origin.hi);
    view.setUint32(at + 4, g.origin.lo);
    view.setUint32(at + 8, g.life >>> 0);
    view.setUint32(at + 12, g.round >>> 0);
    setAge(view, at, g.ageMs);
    view.setUint8(at + 20, 0);
    view.setUint8(at + 21, g.records.length);
    at += GROUP_HEADER_BYTES;
    for (const r of g.records) {
      view.setUint32(at, r.hash.hi);
      view.setUint32(at + 4, r.hash.lo);
      view.setFloat32(at + 8, Math.min(Math.max(r.demand, 0), MAX_DEMAND));
      at += RECORD_BYTES;
    }
  }
  // Relayed groups were checked when they came: copied, with their age now.
  for (const r of relayed) {
    // A few dozen bytes each: a loop costs less than `set`'s call.
    const from = r.bytes;
    for (let i = 0; i < from.length; i++) bytes[at + i] = from[i];
    setAge(view, at, r.ageMs);
    at += from.length;
  }
  return bytes;
}

function setAge(view: DataView, at: number, ageMs: number): void {
  view.setUint32(at + AGE_OFFSET, Math.min(Math.max(Math.ceil(ageMs), 0), 0xffff_ffff));
}

/** The outcome of {@link decodeReports}: never an exception. */
export type ReportsResult =
  | { readonly ok: true; readonly groups: DemandGroup[] }
  | { readonly ok: false; readonly error: string };

/**
 * Why a section is malformed, or undefined when it is well formed: then a
 * {@link GroupReader} reads it. Never throws.
 *
 * @param bytes The extension's bytes, any bytes.
 * @returns The reason, or undefined.
 */
export function checkReports(bytes: Uint8Array): string | undefined {
  if (bytes.length < SECTION_HEADER_BYTES) return "truncated section header";
  // Read by bytes, with no view (see `proto/bytes.ts`).
  if (bytes[0] !== REPORT_VERSION) return `unknown report version ${bytes[0]}`;
  const count = bytes[1];
  let at = SECTION_HEADER_BYTES;
  for (let g = 0; g < count; g++) {
    if (at + GROUP_HEADER_BYTES > bytes.length) return "truncated group header";
    if (bytes[at + 20] !== 0) return "reserved group flags set";
    const n = bytes[at + 21];
    if (n > MAX_RECORDS_PER_GROUP) return `${n} records in a group`;
    at += GROUP_HEADER_BYTES;
    if (at + n * RECORD_BYTES > bytes.length) return "truncated records";
    for (let r = 0; r < n; r++, at += RECORD_BYTES) {
      const demand = getF32(bytes, at + 8);
      if (!(demand >= 0 && demand <= MAX_DEMAND)) return "demand out of range";
    }
  }
  if (at !== bytes.length) return "trailing bytes after the groups";
  return undefined;
}

/**
 * Reads a section that {@link checkReports} passed, one group at a time and
 * in place: most groups a node hears are copies of reports it holds, and
 * are dropped after a look at their header.
 */
export class GroupReader {
  readonly #bytes: Uint8Array;
  #left: number;
  #at = -1;
  #next = SECTION_HEADER_BYTES;
  #originHi = 0;
  #originLo = 0;
  #life = 0;
  #round = 0;
  #ageMs = 0;
  #records = 0;

  /** A reader before the first group of `bytes`, a well-formed section. */
  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
    this.#left = bytes.length >= SECTION_HEADER_BYTES ? bytes[1] : 0;
  }

  /** Moves to the next group; false when there is none. */
  next(): boolean {
    if (this.#left === 0) return false;
    this.#left--;
    const at = this.#at = this.#next;
    const bytes = this.#bytes;
    this.#originHi = getU32(bytes, at);
    this.#originLo = getU32(bytes, at + 4);
    this.#life = getU32(bytes, at + 8);
    this.#round = getU32(bytes, at + 12);
    this.#ageMs = getU32(bytes, at + AGE_OFFSET);
    this.#records = bytes[at + 21];
    this.#next = at + groupBytes(this.#records);
    return true;
  }

  /** The origin's ID, high half. */
  get originHi(): number {
    return this.#originHi;
  }

  /** The origin's ID, low half. */
  get originLo(): number {
    return this.#originLo;
  }

  /** See {@link DemandGroup.life}. */
  get life(): number {
    return this.#life;
  }

  /** See {@link DemandGroup.round}. */
  get round(): number {
    return this.#round;
  }

  /** See {@link DemandGroup.ageMs}. */
  get ageMs(): number {
    return this.#ageMs;
  }

  /** Records in the group. */
  get records(): number {
    return this.#records;
  }

  /** Record `i`'s key hash, high half. */
  hashHi(i: number): number {
    return getU32(this.#bytes, this.#at + GROUP_HEADER_BYTES + i * RECORD_BYTES);
  }

  /** Record `i`'s key hash, low half. */
  hashLo(i: number): number {
    return getU32(this.#bytes, this.#at + GROUP_HEADER_BYTES + i * RECORD_BYTES + 4);
  }

  /** Record `i`'s demand. */
  demand(i: number): number {
    return getF32(this.#bytes, this.#at + GROUP_HEADER_BYTES + i * RECORD_BYTES + 8);
  }

  /** A copy of the group's bytes, to pass on: into `reuse` if it is their size. */
  bytes(reuse?: Uint8Array): Uint8Array {
    const from = this.#at;
    if (reuse?.length !== this.#next - from) return this.#bytes.slice(from, this.#next);
    // A few dozen bytes: a loop costs less than the view that `set` would need.
    for (let i = 0; i < reuse.length; i++) reuse[i] = this.#bytes[from + i];
    return reuse;
  }

  /** The group, whole. */
  group(): DemandGroup {
    const records: DemandRecord[] = [];
    for (let i = 0; i < this.records; i++) {
      records.push({ hash: { hi: this.hashHi(i), lo: this.hashLo(i) }, demand: this.demand(i) });
    }
    const origin = { hi: this.originHi, lo: this.originLo };
    return { origin, life: this.life, round: this.round, ageMs: this.ageMs, records };
  }
}

/**
 * Decodes a section; any malformed input is an error result, never a throw.
 *
 * @param bytes The extension's bytes, any bytes.
 * @returns The groups, or the reason they are none; never throws.
 */
export function decodeReports(bytes: Uint8Array): ReportsResult {
  const error = checkReports(bytes);
  if (error !== undefined) return { ok: false, error };
  const groups: DemandGroup[] = [];
  for (const reader = new GroupReader(bytes); reader.next();) groups.push(reader.group());
  return { ok: true, groups };
}
