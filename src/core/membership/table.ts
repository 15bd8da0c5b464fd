/**
 * The member table: what this node believes of every other member, and the
 * SWIM rules by which news replaces older news.
 *
 * For one member, a record of a higher incarnation always wins; at the same
 * incarnation, suspect beats alive, and dead or left beat both. Only the
 * member itself raises its incarnation, to refute (handled by the node, not
 * here). The dead are kept as tombstones for `tombstoneMs`, so that stale
 * news cannot bring them back.
 *
 * A record of another life of the member (a process started again at the
 * same address) at the same incarnation orders against nothing: the table
 * keeps what it holds, and the node tells the member, which refutes above
 * it. At the u32 maximum, where it cannot, the member's own word wins.
 *
 * @module
 */

import type { Address, MemberId, MemberRecord, MemberState } from "../../proto/mod.ts";
import { type MembershipConfig, suspicionBoundsMs } from "./config.ts";
import type { MemberChange } from "./extension.ts";
import { Suspicion } from "./suspicion.ts";

/** A member as the table holds it. */
export interface Member {
  /** Where it is reached. */
  readonly address: Address;
  /** Its ID, derived from the address. */
  readonly id: MemberId;
  /** The canonical address text, the table's key. */
  readonly key: string;
  /** What this node believes of it. */
  state: MemberState;
  /** The incarnation that belief is about. */
  incarnation: number;
  /** Which life of the member that belief is about; 0 when no record said. */
  life: number;
  /** When the state last changed. */
  changedAtMs: number;
  /** Who suspects it, while suspect. */
  suspicion: Suspicion | undefined;
  /** The suspect record's `from`, to pass on while suspect. */
  suspectedBy: MemberId | undefined;
  /** Counts the members admitted before it: the table gives its members in this order. */
  readonly admitted: number;
}

/** How the table took a record. */
export type Applied = "changed" | "confirmed" | "stale" | "refused";

const RANK: Record<MemberState, number> = { alive: 0, suspect: 1, dead: 2, left: 2 };

/** The highest incarnation: a member told of itself there can refute no higher. */
export const MAX_INCARNATION = 0xffff_ffff;

/** Whether two lives are known and differ: 0 or absent is no life. */
export function otherLife(a: number | undefined, b: number | undefined): boolean {
  return !!a && !!b && a !== b;
}

/** Every member but this node, by address. */
export class MemberTable {
  readonly #members = new Map<string, Member>();
  /** Dead and departed members in the order they died, the oldest first. */
  readonly #tombstones = new Map<string, Member>();
  readonly #suspects = new Map<string, Member>();
  /**
   * The earliest suspicion deadline, while known: asked after every call
   * into the node, and a large fleet in trouble holds hundreds of suspects.
   * Forgotten whenever a suspicion starts, ends or is confirmed.
   */
  #earliest: number | undefined | null = undefined;
  readonly #config: MembershipConfig;
  readonly #onChange: (change: MemberChange, member: Member) => void;
  #live = 0;
  #admitted = 0;
  #refused = 0;
  #looks = 0;
  #lastRefusedAtMs = -Infinity;

  /**
   * @param config The node's configuration.
   * @param onChange Called after every change of a member's state or incarnation.
   */
  constructor(
    config: MembershipConfig,
    onChange: (change: MemberChange, member: Member) => void,
  ) {
    this.#config = config;
    this.#onChange = onChange;
  }

  /** Members held, this node excluded: the live, the suspect and the tombstones. */
  get size(): number {
    return this.#members.size;
  }

  /** Alive and suspect members, this node excluded. */
  get live(): number {
    return this.#live;
  }

  /** Suspect members. */
  get suspects(): number {
    return this.#suspects.size;
  }

  /** Dead and departed members not yet forgotten. */
  get tombstones(): number {
    return this.#tombstones.size;
  }

  /** News of newcomers refused because the table was full. */
  get refused(): number {
    return this.#refused;
  }

  /** Suspects handed out by `dueLook`, to be probed out of turn. */
  get looks(): number {
    return this.#looks;
  }

  /** Whether a newcomer was refused within the last `tombstoneMs`. */
  isFull(nowMs: number): boolean {
    return nowMs - this.#lastRefusedAtMs < this.#config.tombstoneMs;
  }

  /** The member at `key` (canonical address text), if any. */
  get(key: string): Member | undefined {
    return this.#members.get(key);
  }

  /** Every member held, in no particular order. */
  values(): IterableIterator<Member> {
    return this.#members.values();
  }

  /**
   * Takes news of another member by the SWIM rules.
   *
   * @param record The news; its ID has been checked against its address.
   * @param nowMs Now.
   * @param direct Whether the member itself says it, as a datagram's sender.
   */
  apply(record: MemberRecord, nowMs: number, direct = false): Applied {
    const key = record.address.toString();
    const member = this.#members.get(key);
    if (!member) return this.#admit(key, record, nowMs);
    const rank = RANK[record.state];
    if (record.incarnation < member.incarnation) return "stale";
    if (record.incarnation === member.incarnation && otherLife(record.life, member.life)) {
      if (!direct || record.incarnation !== MAX_INCARNATION) return "stale";
    } else if (record.incarnation === member.incarnation) {
      if (record.state === "suspect" && member.state === "suspect") {
        return this.#confirm(member, record.from) ? "confirmed" : "stale";
      }
      if (rank <= RANK[member.state]) return "stale";
    } else if (record.state === "suspect" && RANK[member.state] === 2) {
      // A suspicion of a newer incarnation of a dead member is no proof it lives.
      return "stale";
    }
    this.#set(member, record, nowMs);
    return "changed";
  }

  /** The earliest moment a suspicion may expire, if any member is suspect. */
  nextDeadlineMs(): number | undefined {
    if (this.#earliest !== null) return this.#earliest;
    let earliest: number | undefined;
    for (const member of this.#suspects.values()) {
      const deadline = member.suspicion!.deadlineMs;
      if (earliest === undefined || deadline < earliest) earliest = deadline;
    }
    this.#earliest = earliest;
    return earliest;
  }

  /**
   * The suspect this node should probe itself now, before its suspicion
   * turns into death: the one whose deadline comes first within `withinMs`
   * and that this node has not probed since the suspicion began; marked
   * probed. Under loss, a node that took a suspicion from gossip may miss
   * the refutation that every other member heard: at 200 members under 30%
   * loss, 15 pairs a minute on seed 1, each an observer alone in holding
   * the suspicion when it ran out. Its own ping carries the suspicion to
   * the suspect (`compose.ts`), and the ack the suspect's word of itself,
   * refuted if it had not yet. A suspicion another member has confirmed
   * is left alone: that member failed to reach the suspect too, which a
   * lone observer's missed refutation does not explain, and every node's
   * look at a crashed or cut-off member is datagrams lost. Looking at
   * every suspicion short of its full count of confirmations kept a
   * healed region's members suspect: each failed look took the
   * round-robin's probe, and each look that got through carried the
   * suspicion back to a member that had to refute again (region C cut
   * off at 200 instances, Optimistic: 1.024 R steady once healed, against
   * 1.008 R with no looks or with looks at unconfirmed suspicions only).
   */
  dueLook(nowMs: number, withinMs: number): Member | undefined {
    let due: Member | undefined;
    for (const member of this.#suspects.values()) {
      const suspicion = member.suspicion!;
      if (suspicion.looked || suspicion.confirmations > 0) continue;
      if (suspicion.deadlineMs - nowMs > withinMs) continue;
      if (!due || suspicion.deadlineMs < due.suspicion!.deadlineMs) due = member;
    }
    if (due) {
      due.suspicion!.look();
      this.#looks++;
    }
    return due;
  }

  /**
   * Turns expired suspicions into deaths and forgets expired tombstones.
   *
   * @returns The members declared dead now, to be announced.
   */
  expire(nowMs: number): Member[] {
    const died: Member[] = [];
    const earliest = this.nextDeadlineMs();
    for (
      const member of earliest !== undefined && earliest <= nowMs
        ? [...this.#suspects.values()]
        : []
    ) {
      if (member.suspicion!.deadlineMs > nowMs) continue;
      const { address, id, incarnation } = member;
      this.#set(member, { state: "dead", address, id, incarnation }, nowMs);
      died.push(member);
    }
    for (const member of this.#tombstones.values()) {
      if (nowMs - member.changedAtMs < this.#config.tombstoneMs) break;
      this.#tombstones.delete(member.key);
      this.#members.delete(member.key);
      const forgotten = { address: member.address, id: member.id, incarnation: member.incarnation };
      this.#onChange({
        member: { ...forgotten, state: "forgotten" },
        previous: member.state,
        nowMs,
      }, member);
    }
    return died;
  }

  #admit(key: string, record: MemberRecord, nowMs: number): Applied {
    // News of the dead is only worth keeping for members one already knows.
    if (RANK[record.state] === 2) return "stale";
    // The table holds this node too: `maxMembers` counts it.
    if (this.#members.size + 1 >= this.#config.maxMembers) {
      this.#refused++;
      this.#lastRefusedAtMs = nowMs;
      return "refused";
    }
    const member: Member = {
      address: record.address,
      id: record.id,
      key,
      state: "alive",
      incarnation: record.incarnation,
      life: record.life ?? 0,
      changedAtMs: nowMs,
      suspicion: undefined,
      suspectedBy: undefined,
      admitted: this.#admitted++,
    };
    this.#members.set(key, member);
    this.#live++;
    this.#onChange({ member: toInfo(member), previous: undefined, nowMs }, member);
    if (record.state === "suspect") this.#set(member, record, nowMs);
    return "changed";
  }

  #set(member: Member, record: MemberRecord, nowMs: number): void {
    const previous = member.state;
    const wasLive = RANK[previous] < 2;
    member.state = record.state;
    member.incarnation = record.incarnation;
    member.life = record.life ?? member.life;
    member.changedAtMs = nowMs;
    if (this.#suspects.delete(member.key)) this.#earliest = null;
    this.#tombstones.delete(member.key);
    member.suspicion = undefined;
    member.suspectedBy = undefined;
    if (record.state === "suspect") {
      member.suspectedBy = record.from;
      member.suspicion = new Suspicion(nowMs, {
        from: record.from.toString(),
        // The live members with this node, which `live` leaves out.
        ...suspicionBoundsMs(this.#config, this.#live + 1),
        // Who could confirm: the live members but this one (this node is not in `live`).
        expected: Math.min(this.#config.suspicionConfirmations, Math.max(0, this.#live - 1)),
      });
      this.#suspects.set(member.key, member);
      this.#earliest = null;
    } else if (record.state !== "alive") {
      this.#tombstones.set(member.key, member);
    }
    const isLive = RANK[record.state] < 2;
    this.#live += Number(isLive) - Number(wasLive);
    this.#onChange({ member: toInfo(member), previous, nowMs }, member);
  }

  #confirm(member: Member, from: MemberId): boolean {
    const confirmed = member.suspicion!.confirm(from.toString());
    if (confirmed) this.#earliest = null;
    return confirmed;
  }
}

function toInfo(member: Member): MemberChange["member"] {
  const { address, id, state, incarnation, life } = member;
  return { address, id, state, incarnation, ...(life ? { life } : {}) };
}
