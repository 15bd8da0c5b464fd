/**
 * News of other members and what it sets going. A record taken goes to the
 * member table (news of this node goes to its own record, which refutes);
 * a new witness of a suspicion is passed on, as others count witnesses too.
 * A probe that failed raises this node's own suspicion, but not of a
 * newcomer nobody could reach yet, and the suspect hears it first
 * (Lifeguard's buddy system). A member's change is handed to the parts that
 * follow it: the reflection gate forgets the dead, a member that died
 * proven is one to reconnect to (`reconnect.ts`), the news queue spreads
 * the change, the probe order takes a member back, the join is over, the
 * extension hears of it. Also the members proven, as the prober reads them.
 *
 * @module
 */

import type { Address, MemberRecord } from "../../proto/mod.ts";
import type { Broadcasts } from "./broadcasts.ts";
import { recordOf } from "./compose.ts";
import type { MembershipConfig } from "./config.ts";
import type { MemberChange, MembershipExtension } from "./extension.ts";
import type { Gate } from "./gate.ts";
import type { Join } from "./join.ts";
import type { Outbox } from "./outbox.ts";
import type { Prober } from "./prober.ts";
import type { Reconnect } from "./reconnect.ts";
import type { SelfRecord } from "./self.ts";
import type { Applied, Member, MemberTable } from "./table.ts";

/**
 * Periods after this node learns a member's newer incarnation before it
 * corrects a sender of older news of it (see `MemberNews.correction`): a
 * refutation reached nearly every member of 200 within a second.
 */
const CORRECT_AFTER_PERIODS = 5;

/** The parts of a node its news reaches. */
export interface NewsParts {
  readonly address: Address;
  readonly config: MembershipConfig;
  readonly self: SelfRecord;
  readonly table: MemberTable;
  readonly broadcasts: Broadcasts;
  readonly gate: Gate;
  readonly outbox: Outbox;
  readonly prober: Prober;
  readonly join: Join;
  readonly reconnect: Reconnect;
  readonly extension: MembershipExtension | undefined;
}

/** One node's handling of news of members. */
export class MemberNews {
  readonly #parts: NewsParts;
  /** Counts the table's changes (see `proven`). */
  #tableChanges = 0;
  /** The members proven, as last read, and the counts of changes they were read at. */
  #provenKept: { gate: number; table: number; members: readonly Member[] } | undefined;

  /** @param parts The node's parts. */
  constructor(parts: NewsParts) {
    this.#parts = parts;
  }

  /** Takes news of a member; "refuted" when it was news of this node that it had to refute. */
  apply(record: MemberRecord, nowMs: number, direct = false): Applied | "refuted" {
    const { address, self, table, broadcasts, reconnect } = this.#parts;
    if (record.address.equals(address)) return self.hear(record) ? "refuted" : "stale";
    const key = record.address.toString();
    const wasDead = direct && table.get(key)?.state === "dead";
    const applied = table.apply(record, nowMs, direct);
    if (applied === "confirmed") {
      // Others count independent suspicions too, so a new witness is news.
      broadcasts.push(key, record);
    } else if (wasDead && applied === "changed") reconnect.cameBack();
    return applied;
  }

  /**
   * `record`, which the table found stale, came from a sender: if it is a
   * suspicion or death of a member this node has held at a newer
   * incarnation for a while, the sender missed the refutation that went
   * round, and is told at once (the receiver sends it, see `receive.ts`).
   * Under 30% loss at 200 members, one node in a suspicion's wave now and
   * then missed its refutation and, alone in holding it, declared the
   * member dead when its suspicion ran out (15 pairs a minute on seed 1),
   * while spreading the stale suspicion to several members that knew
   * better. Within the first `CORRECT_AFTER_PERIODS` of this node learning
   * the refutation, a sender behind is most likely still in the wave and
   * hears it anyway: corrected too, a fleet of 200 would send some 30 times
   * as many (a stale record came 170,000 times a minute, a late one 640 times).
   *
   * @returns The address of the member whose record corrects the sender, if one does.
   */
  correction(nowMs: number, record: MemberRecord): Address | undefined {
    const { table, config } = this.#parts;
    if (record.state === "alive") return undefined;
    const member = table.get(record.address.toString());
    if (!member || (member.state !== "alive" && member.state !== "suspect")) return undefined;
    if (member.incarnation <= record.incarnation) return undefined;
    if (nowMs - member.changedAtMs < CORRECT_AFTER_PERIODS * config.protocolPeriodMs) {
      return undefined;
    }
    return member.address;
  }

  /** The probe of `member` failed: this node suspects it, unless it is a newcomer nobody could reach. */
  suspect(nowMs: number, member: Member): void {
    const { outbox, config } = this.#parts;
    if (member.state !== "alive" && member.state !== "suspect") return;
    // Nobody could ping a member only heard of lately, for want of credit:
    // a newcomer not yet proven to anyone asked, not yet one that failed.
    // Past `suspicionMaxMs` it is suspected like any other, a forger's
    // stranger included.
    const unproven = outbox.helperRank(member) === 0 && !outbox.reachable(member);
    if (unproven && nowMs - member.changedAtMs < config.suspicionMaxMs) return;
    const { address, id, incarnation } = member;
    const record: MemberRecord = {
      state: "suspect",
      address,
      id,
      incarnation,
      from: this.#parts.address.id,
    };
    // Already suspect, this failed probe is one more independent witness.
    if (this.apply(record, nowMs) === "stale") return;
    // Lifeguard's buddy system: the suspect hears it first, so that it
    // refutes before the news has gone round and the timeouts run out.
    outbox.send(nowMs, address, { type: "gossip" });
  }

  /** The table changed `member`: tells the parts that follow it. */
  changed(change: MemberChange, member: Member): void {
    const { gate, broadcasts, prober, join, reconnect, extension } = this.#parts;
    this.#tableChanges++;
    const state = change.member.state;
    if (state === "dead") {
      // Tried again now and then while its record lasts, if its address
      // was proven when it died: a stranger never proven is never tried.
      if (gate.isProven(member.key) || join.isSeed(member.address)) reconnect.add(member);
    } else reconnect.drop(member.key);
    if (state === "dead" || state === "left" || state === "forgotten") {
      gate.forget(member.key);
    }
    if (change.member.state !== "forgotten") {
      broadcasts.push(member.key, recordOf(member));
      const wasLive = change.previous === "alive" || change.previous === "suspect";
      if (change.member.state === "alive" && !wasLive) prober.add(member);
      if (change.member.state === "alive") join.joined();
    }
    extension?.memberChanged?.(change);
  }

  /**
   * The members whose address is proven, in the table's order: made again
   * only once the gate's proven addresses or the table have changed. A
   * probe whose random draws of helpers come up short reads it, and while
   * a thousand form, sorting it each time was a fiftieth of their time.
   */
  proven(): readonly Member[] {
    const { gate, table } = this.#parts;
    const changes = gate.provenChanges;
    const kept = this.#provenKept;
    if (kept?.gate === changes && kept.table === this.#tableChanges) return kept.members;
    const proven: Member[] = [];
    for (const key of gate.proven()) {
      const member = table.get(key);
      if (member) proven.push(member);
    }
    proven.sort((a, b) => a.admitted - b.admitted);
    this.#provenKept = { gate: changes, table: this.#tableChanges, members: proven };
    return proven;
  }
}
