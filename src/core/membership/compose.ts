/**
 * Composing datagrams: which records ride along, in what order, and how the
 * layer above's bytes share the room. Every datagram stays within
 * `MAX_MESSAGE_BYTES`, so that a signed copy fits in `MAX_DATAGRAM_BYTES`.
 *
 * @module
 */

import {
  type Address,
  encode,
  encodedSize,
  MAX_MESSAGE_BYTES,
  type MemberRecord,
  type Message,
  recordSize,
  type Sender,
} from "../../proto/mod.ts";
import { MESSAGE_SECTION_HEADER_BYTES } from "../../proto/codec.ts";
import { type Broadcasts, retransmitLimit } from "./broadcasts.ts";
import type { MembershipConfig } from "./config.ts";
import type { MembershipExtension } from "./extension.ts";
import type { SendFields } from "./prober.ts";
import { type Member, type MemberTable, otherLife } from "./table.ts";

/** Room of each probe and ack that membership keeps for its own records. */
const MEMBERSHIP_RESERVE_BYTES = 256;
/** The most of a probe or an ack the fleet's rules take (their digest and recent changes). */
const RULES_ROOM_BYTES = 400;

/** What the composer reads from its node. */
export interface ComposerParts {
  readonly config: MembershipConfig;
  readonly extension: MembershipExtension | undefined;
  readonly table: MemberTable;
  readonly broadcasts: Broadcasts;
  /** A random member of the probe round, for anti-entropy. */
  readonly randomMember: () => Member | undefined;
  /** This node as a sender, at its current incarnation. */
  readonly sender: () => Sender;
  /** Whether the operator named `address` a seed. */
  readonly isSeed: (address: Address) => boolean;
}

/** Builds one node's datagrams. */
export class Composer {
  readonly #parts: ComposerParts;

  /** @param parts The node's state the composer reads. */
  constructor(parts: ComposerParts) {
    this.#parts = parts;
  }

  /**
   * Encodes a message to `to`: the extensions' bytes on probes and acks,
   * then as many records as fit; the demand extension's also on requests
   * and nacks of indirect probes, after the records.
   *
   * @param limits `peer`, what `to` claimed of itself, when answering
   *   it; `maxBytes`, the most the datagram may take (an address
   *   not proven: then it is `lean`, carrying only what this node believes
   *   of `to`, which `to` may need to refute, and of `target`); `padTo`, the length to pad
   *   it to, within `maxBytes`, to pay for the answer it asks for;
   *   `target`, a member whose record goes next after `to`'s (see `#firstRecords`).
   * @returns The datagram, or undefined when even the bare message exceeds `maxBytes`.
   */
  compose(
    nowMs: number,
    to: Address,
    fields: SendFields,
    limits: {
      peer?: Sender;
      maxBytes?: number;
      lean?: boolean;
      padTo?: number;
      target?: Address;
    } = {},
  ): Uint8Array | undefined {
    const { extension } = this.#parts;
    const base = this.#bare(fields);
    const maxBytes = Math.min(MAX_MESSAGE_BYTES, limits.maxBytes ?? Infinity);
    const bare = encodedSize(base);
    if (bare > maxBytes) return undefined;
    let room = maxBytes - bare - MESSAGE_SECTION_HEADER_BYTES;
    // An answer cut down to what its question paid for (`gate.ts`) keeps
    // the same share for records, not the whole reserve, which would leave
    // no room for demand in an ack of a few hundred bytes.
    const reserve = Math.floor(MEMBERSHIP_RESERVE_BYTES * maxBytes / MAX_MESSAGE_BYTES);
    let payload: Uint8Array | undefined;
    let rules: Uint8Array | undefined;
    const probe = fields.type === "ping" || fields.type === "ack";
    // Rules first, within a small share, so the digest and recent changes
    // always ride along however many demand reports a large fleet relays.
    if (extension?.outgoingRules && probe && !limits.lean) {
      const share = Math.min(
        RULES_ROOM_BYTES,
        room - MESSAGE_SECTION_HEADER_BYTES - reserve,
      );
      rules = share > 0
        ? extension.outgoingRules(nowMs, { id: to.id, address: to }, share)
        : undefined;
      if (rules && rules.length > share) rules = undefined;
      if (rules) room -= MESSAGE_SECTION_HEADER_BYTES + rules.length;
    }
    // Demand rides on the probe's datagrams to a member proven: first on
    // probes and acks, within what membership keeps for its records; on
    // requests and nacks of indirect probes in what the records leave (not
    // on joins and gossip, whose room is the rule transfer's). On probes and
    // acks alone, a fleet forming under 30% loss, which sends most of its
    // datagrams to proven members as requests and nacks of probes through
    // the seed, heard one or two sections of demand a node a second, and at
    // 50 nodes admitted 1.5 R for seconds after traffic started; taken
    // first on those too, the demand crowded out refutations, and at 200
    // nodes more members were falsely declared dead, each leaving a share
    // too large for someone.
    const demand = (roomBytes: number) => {
      if (!extension?.outgoing || limits.lean) return;
      const maxBytes = roomBytes - MESSAGE_SECTION_HEADER_BYTES;
      if (maxBytes <= 0) return;
      const bytes = extension.outgoing(nowMs, { id: to.id, address: to }, maxBytes);
      if (bytes && bytes.length <= maxBytes) payload = bytes;
    };
    if (probe) {
      demand(room - reserve);
      if (payload) room -= MESSAGE_SECTION_HEADER_BYTES + payload.length;
    }
    const first = this.#firstRecords(to, room, limits.peer, limits.target);
    const records = limits.lean ? first : this.#piggyback(to, room, first);
    if (fields.type === "pingReq" || fields.type === "nack") {
      for (const record of records) room -= recordSize(record);
      demand(room);
    }
    // `base` is this call's own: filled in place rather than copied.
    const message = base as Message & {
      records: MemberRecord[];
      extension?: Uint8Array;
      rules?: Uint8Array;
    };
    message.records = records;
    if (payload) message.extension = payload;
    if (rules) message.rules = rules;
    const padTo = Math.min(maxBytes, limits.padTo ?? 0);
    const padding = padTo > 0 ? padTo - encodedSize(message) - MESSAGE_SECTION_HEADER_BYTES : 0;
    return encode(padding > 0 ? { ...message, padding } : message);
  }

  /** Bytes of `fields` with no records: the least a datagram of them takes. */
  bareSize(fields: SendFields): number {
    return encodedSize(this.#bare(fields));
  }

  #bare(fields: SendFields): Message {
    return { ...fields, sender: this.#parts.sender(), records: [] } as Message;
  }

  /**
   * The records that go first, lean datagrams' only ones: what this node
   * believes of `to` when `to` may not know it (a suspicion or death to
   * refute: Lifeguard's buddy system), then this node's record of `target`
   * when it may refute something, past incarnation 0: a relayed ack's
   * target, whose word of itself the helper just heard. A requester that
   * holds the target suspect and has not proven it probes it through
   * helpers alone, and learns the refutation it missed only so: at 200
   * members under 30% loss, 3 pairs a minute on seed 2 were such, each a
   * member falsely dead to one node.
   */
  #firstRecords(
    to: Address,
    budgetBytes: number,
    peer: Sender | undefined,
    target: Address | undefined,
  ): MemberRecord[] {
    const records: MemberRecord[] = [];
    const about = this.#newsFor(to, peer);
    if (about && recordSize(about) <= budgetBytes) {
      records.push(about);
      budgetBytes -= recordSize(about);
    }
    const member = target && this.#parts.table.get(target.toString());
    if (
      member && member.incarnation > 0 && (member.state === "alive" || member.state === "suspect")
    ) {
      const record = recordOf(member);
      if (recordSize(record) <= budgetBytes) records.push(record);
    }
    return records;
  }

  /**
   * Page `page` of this node's live members, for a joiner. Pages are cut by
   * bytes in table order and counted afresh for every request, so a member
   * that comes or goes meanwhile may be missed once; anti-entropy mends that.
   * A page past the last comes empty, with the true count.
   */
  statePage(to: Address, peer: Sender, page: number): Uint8Array {
    const records: MemberRecord[] = [];
    const about = this.#newsFor(to, peer);
    if (about) records.push(about);
    for (const member of this.#parts.table.values()) {
      const live = member.state === "alive" || member.state === "suspect";
      if (live && !member.address.equals(to)) records.push(recordOf(member));
    }
    const sender = this.#parts.sender();
    const empty = { type: "state", sender, page, pages: 1, records: [] } as const;
    // A page leaves room, in what a padded join paid, for a ping that proves the joiner.
    const room = MAX_MESSAGE_BYTES - this.bareSize({ type: "ping", seq: 0 }) -
      encodedSize(empty) - MESSAGE_SECTION_HEADER_BYTES;
    const starts = [0];
    for (let i = 0, used = 0; i < records.length; i++) {
      const size = recordSize(records[i]);
      if (used + size > room) {
        starts.push(i);
        used = 0;
      }
      used += size;
    }
    const chunk = page < starts.length
      ? records.slice(starts[page], starts[page + 1] ?? records.length)
      : [];
    return encode({ ...empty, pages: starts.length, records: chunk });
  }

  /**
   * Records for a datagram to `to`: first those of `#firstRecords`
   * (`first`), then queued news, then a few alive records at random
   * (anti-entropy, which mends what lost datagrams left out).
   */
  #piggyback(to: Address, budgetBytes: number, first: MemberRecord[]): MemberRecord[] {
    const { config, table, broadcasts } = this.#parts;
    const records = first;
    const key = to.toString();
    for (const record of first) budgetBytes -= recordSize(record);
    const skip = first.map((record) => record.address.toString());
    const limit = retransmitLimit(config.retransmitMult, table.live + 1);
    // SWIM's bound on retransmissions counts on datagrams to members at
    // random. A seed helps every probe of a member not yet proven, and so
    // takes a large share of a forming fleet's datagrams: news spent on
    // it, which heard every joiner anyway, reached the last members seconds late.
    const uncounted = this.#parts.isSeed(to);
    for (const record of broadcasts.take(budgetBytes, { limit, skip, uncounted })) {
      records.push(record);
      budgetBytes -= recordSize(record);
    }
    for (let i = 0; i < config.antiEntropyRecords; i++) {
      const member = this.#parts.randomMember();
      if (!member || member.state !== "alive" || member.key === key) continue;
      if (included(records, member)) continue;
      const record = recordOf(member);
      if (recordSize(record) > budgetBytes) break;
      records.push(record);
      budgetBytes -= recordSize(record);
    }
    return records;
  }

  /**
   * What this node believes of `to`, if `to` should hear it: news of its
   * suspicion or death, of a higher incarnation than it claims, or of
   * another life of it (the process before it at its address), which it
   * must outbid for its own word to count.
   */
  #newsFor(to: Address, peer?: Sender): MemberRecord | undefined {
    const member = this.#parts.table.get(to.toString());
    if (!member) return undefined;
    const newer = peer !== undefined &&
      (member.incarnation > peer.incarnation || otherLife(member.life, peer.life));
    return member.state !== "alive" || newer ? recordOf(member) : undefined;
  }
}

/** Whether `records` has one of `member` (a few records: read through, not indexed). */
function included(records: readonly MemberRecord[], member: Member): boolean {
  for (const record of records) if (record.address.equals(member.address)) return true;
  return false;
}

/** The record that states what the table believes of `member`. */
export function recordOf(member: Member): MemberRecord {
  const { state, address, id, incarnation, life } = member;
  // Each shape written out rather than spread: a spread costs a native call
  // for each record, and a forming fleet of a thousand makes millions.
  if (state === "suspect") {
    const from = member.suspectedBy!;
    return life
      ? { state, address, id, incarnation, life, from }
      : { state, address, id, incarnation, from };
  }
  return life ? { state, address, id, incarnation, life } : { state, address, id, incarnation };
}
