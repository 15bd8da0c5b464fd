/**
 * One member's side of sharing rules, the face the fleet node drives: its
 * table and its clock, the changes made here and those taken from peers
 * (and why one is refused), and the parts that answer for the rest: the
 * gossip of recent changes (`gossip.ts`), the transfers it pulls
 * (`transfer.ts`), the pages it answers with (`serve.ts`), whether it is in
 * step (`step.ts`) and its figures (`stats.ts`). Sans I/O: the fleet node
 * hands it the rules sections of datagrams and takes what it sends; the
 * design is in `mod.ts`.
 *
 * @module
 */

import type { Peer, Sender } from "../../proto/mod.ts";
import type { MemberChange } from "../membership/extension.ts";
import {
  BlockedUntil,
  HLC_TICKS_PER_MS,
  MAX_CLOCK,
  MAX_CLOCK_SKEW_MS,
  misfit,
  type Origin,
  type RuleEntry,
  type RuleKind,
  TOMBSTONE_MS,
  versionMs,
} from "./entry.ts";
import { entrySize } from "./entry_wire.ts";
import { ChangeGossip } from "./gossip.ts";
import { hear, type PeerState, unheard } from "./peer.ts";
import { PageServer, type RulesSend } from "./serve.ts";
import type { HashKey } from "../hash.ts";
import { RuleTable } from "./table.ts";
import { StepWatch } from "./step.ts";
import { Counts, type FleetRulesStats, rulesStats, tableFullReason } from "./stats.ts";
import { DISAGREE_PERIODS, Transfers } from "./transfer.ts";
import {
  decodeRules,
  type Digest,
  MAX_ENTRY_BYTES,
  RULES_DATAGRAM_BYTES,
  RULES_HEADER_BYTES,
  SectionWriter,
} from "./wire.ts";

/** What a member's rule sharing needs. */
export interface RulesSyncOptions {
  /** This member's ID, which breaks ties between versions. */
  readonly self: Origin;
  /** Rules and tombstones held at most. */
  readonly maxEntries: number;
  /**
   * Of `maxEntries`, the entries kept for members' changes: entries whose
   * origin is no live member (a forger's, with signing off) take at most
   * the rest, so they cannot fill the room an operator's change needs on
   * any member. @default {0}
   */
  readonly reservedEntries?: number;
  /** The protocol period, ms: timers count in it. */
  readonly protocolPeriodMs: number;
  /** The key this member draws its page requesters' tickets under: random, its own (`serve.ts`). */
  readonly ticketKey: HashKey;
  /** Wall-clock ms at `nowMs` 0: versions are stamped in wall-clock time. */
  readonly wallOffsetMs: number;
  /** A change from a peer that is newer than what the table held: make it so here, at `nowMs`. */
  readonly apply: (entry: RuleEntry, nowMs: number) => void;
}

/** See the module doc. */
export class RulesSync {
  readonly #options: RulesSyncOptions;
  readonly #table: RuleTable;
  readonly #gossip: ChangeGossip;
  readonly #peers = new Map<string, PeerState>();
  /** The IDs of live members (`hi:lo`): whose entries are members', not strangers' (`table.ts`). */
  readonly #members = new Set<string>();
  readonly #server: PageServer;
  readonly #sends: RulesSend[] = [];
  readonly #step = new StepWatch();
  readonly #transfers: Transfers;
  #clock = 0;
  #newest = 0;
  /** Whether changes made here just made this member ahead: it tells its peers at the next tick. */
  #nudgeDue = false;
  readonly #counts = new Counts();

  /**
   * @param options Who this member is, its bounds and clock, and how to apply a change.
   * @param learning Whether it starts learning: it has seeds, so a fleet to learn from.
   */
  constructor(options: RulesSyncOptions, learning: boolean) {
    this.#options = options;
    this.#table = new RuleTable(options.maxEntries, TOMBSTONE_MS, {
      self: options.self,
      isMember: (origin) => this.#members.has(originKey(origin)),
      reservedEntries: options.reservedEntries ?? 0,
    });
    this.#gossip = new ChangeGossip(DISAGREE_PERIODS * options.protocolPeriodMs);
    this.#server = new PageServer(options.ticketKey, RULES_DATAGRAM_BYTES);
    this.#transfers = new Transfers({
      self: options.self,
      protocolPeriodMs: options.protocolPeriodMs,
      peers: this.#peers,
      digest: () => this.#table.digest(),
      send: (send) => this.#sends.push(send),
    }, learning);
  }

  /** Whether this member is still learning the fleet's rules. */
  get learning(): boolean {
    return this.#transfers.learning;
  }

  /** The table's digest. */
  digest(): Digest {
    return this.#table.digest();
  }

  /** The entry held for a rule, a removal included. */
  entry(kind: RuleKind, className: string, key: string): RuleEntry | undefined {
    return this.#table.get(kind, className, key);
  }

  /** The live rules held of one kind and class. */
  rulesOf(kind: RuleKind, className: string): IterableIterator<RuleEntry> {
    return this.#table.liveOf(kind, className);
  }

  /** Every live rule held. */
  rules(): IterableIterator<RuleEntry> {
    return this.#table.live();
  }

  /**
   * Why a change made here to a rule could not be kept for want of room,
   * here or on the members it goes to, `""` when it can: ask before
   * applying it, so that this member and the fleet agree on what was
   * refused. Every member takes it as a member's, into the room strangers
   * cannot take: a change that would fit here alone is refused, not made
   * here alone.
   *
   * @param change The rule.
   * @returns The reason, or `""`.
   */
  roomFor(changes: Iterable<Pick<RuleEntry, "kind" | "className" | "key">>): string {
    const t = this.#table;
    const needed = t.newRules(changes);
    if (needed <= t.roomShared) return "";
    t.markFull();
    this.#counts.full++;
    const what = needed === 1 ? "the change" : `${needed} new rules (room for ${t.roomShared})`;
    return `the fleet rules table is full: ${t.size} of ${t.bound} entries, ` +
      `and no removal to give up: ${what} would not be kept (maxEntries)`;
  }

  /** Why the table is full (a rule was refused for room since a slot was last freed), `""` when not. */
  fullReason(): string {
    return tableFullReason(this.#table);
  }

  /**
   * Records a change made here (already applied here) and starts its gossip.
   *
   * @param nowMs The time, ms.
   * @param change The rule and what it now says (`value` undefined: removed).
   * @returns The entry with its version, or undefined when it is too large to share.
   */
  local(nowMs: number, change: Omit<RuleEntry, "version">): RuleEntry | undefined {
    const wallMs = this.#wallMs(nowMs);
    this.#clock = Math.min(MAX_CLOCK, Math.max(this.#clock + 1, wallMs * HLC_TICKS_PER_MS));
    const entry = { ...change, version: { clock: this.#clock, origin: this.#options.self } };
    // What a peer would refuse is not shared (the book's checks make none such: a test holds it).
    if (
      entrySize(entry) > MAX_ENTRY_BYTES ||
      misfit(entry.kind, entry.className, entry.key, entry.value)
    ) {
      this.#counts.unshared++;
      return undefined;
    }
    if (this.#table.merge(entry, wallMs) === "full") {
      this.#counts.full++;
      return undefined;
    }
    this.#newest = Math.max(this.#newest, entry.version.clock);
    if (this.#gossip.changed(nowMs)) this.#nudgeDue = true;
    this.#gossip.enqueue(entry);
    return entry;
  }

  /**
   * Shares a block of `key` for `ms` from now (already applied here), as
   * the instant it ends, unless the fleet's block of it in force ends later
   * (a shorter block leaves a longer one, as it does on one instance).
   *
   * @returns The entry shared, or undefined when nothing was (or it could not be).
   */
  block(nowMs: number, className: string, key: string, ms: number): RuleEntry | undefined {
    const untilMs = this.#wallMs(nowMs) + Math.ceil(ms);
    const held = this.#table.get("block", className, key)?.value;
    if (held instanceof BlockedUntil && held.untilMs >= untilMs) return undefined;
    return this.local(nowMs, { kind: "block", className, key, value: new BlockedUntil(untilMs) });
  }

  /**
   * Shares the end of the fleet's block of `key`, if one is in force (it is
   * lifted here already).
   *
   * @returns The removal shared, or undefined when no block was in force.
   */
  unblock(nowMs: number, className: string, key: string): RuleEntry | undefined {
    const held = this.#table.get("block", className, key)?.value;
    if (!(held instanceof BlockedUntil) || held.untilMs <= this.#wallMs(nowMs)) return undefined;
    return this.local(nowMs, { kind: "block", className, key, value: undefined });
  }

  /** Membership's news: who may be talked to, and pulled from. */
  memberChanged(change: MemberChange): void {
    const { member } = change;
    const key = member.address.toString();
    const id = originKey(member.address.id);
    if (member.state === "alive" || member.state === "suspect") {
      if (!this.#peers.has(key)) this.#peers.set(key, unheard(member.address));
      this.#members.add(id);
      return;
    }
    this.#peers.delete(key);
    this.#members.delete(id);
    this.#transfers.memberGone(key);
  }

  /**
   * The rules section for a probe or an ack: the digest, then recent
   * changes, the least sent first, as room allows.
   */
  outgoingRules(nowMs: number, _to: Peer, maxBytes: number): Uint8Array | undefined {
    if (maxBytes < RULES_HEADER_BYTES) return undefined;
    const ahead = this.#gossip.ahead(nowMs);
    const writer = new SectionWriter(maxBytes, this.learning, this.#table.digest(), ahead);
    this.#gossip.write(writer, this.#peers.size + 1);
    return writer.finish();
  }

  /** A rules section from `from`: merge its changes, answer its request, take its page. */
  incomingRules(nowMs: number, from: Sender, bytes: Uint8Array): void {
    const section = decodeRules(bytes);
    if (!section) {
      this.#counts.malformed(from, "a rules header of another version or malformed");
      return;
    }
    const key = from.address.toString();
    const peer = this.#peers.get(key);
    if (!peer) {
      this.#counts.strangers++;
      return;
    }
    for (const reason of section.refusals) this.#counts.malformed(from, reason);
    if (section.cut !== undefined) this.#counts.malformed(from, section.cut);
    if (section.unknownPart !== undefined) this.#counts.skippedParts++;
    const wallMs = this.#wallMs(nowMs);
    for (const entry of section.changes) {
      if (this.#take(nowMs, from, entry, wallMs)) this.#gossip.enqueue(entry);
    }
    if (section.pull) this.#server.request(peer.address, section.pull, bytes.length);
    const pull = this.#transfers.from(key);
    if (section.page && pull) {
      for (const entry of section.page.entries) {
        this.#take(nowMs, from, entry, wallMs);
      }
      pull.arrived(section.page);
    }
    const mine = this.#table.digest();
    hear(peer, nowMs, section, mine, this.learning);
    this.#transfers.heard(nowMs, peer, section.page !== undefined);
    this.#server.answer(this.#table, this.learning, mine, (send) => this.#sends.push(send));
  }

  /**
   * Runs what is due: tombstones expire; a newcomer starts or ends its
   * transfer; a lost request is asked again; a lasting disagreement with a
   * peer starts a transfer from it.
   *
   * @param nowMs The time, ms.
   * @param joining Whether membership is still joining (no peer reached yet).
   */
  tick(nowMs: number, joining: boolean): void {
    this.#table.expire(this.#wallMs(nowMs));
    if (this.#nudgeDue) this.#nudge();
    this.#transfers.learn(nowMs, joining);
    const mine = this.#table.digest();
    if (this.#step.update(nowMs, this.#peers.values(), mine, this.learning)) {
      this.#transfers.agreed();
    }
    this.#transfers.pull(nowMs, mine);
  }

  /**
   * The next datagram of rule sharing to send on its own (a request or a
   * page), to a live member.
   *
   * @returns Where and what, or undefined.
   */
  pollSend(): RulesSend | undefined {
    return this.#sends.shift();
  }

  /** Keeps why a change taken into the table was refused here after (by the book's bounds). */
  refusedHere(reason: string): void {
    this.#counts.refusal(undefined, reason);
  }

  /** Why this member is out of step (see `step.ts`), `""` when it is in step. */
  outOfStep(nowMs: number): string {
    return this.#step.reason(nowMs, this.#table.digest());
  }

  /**
   * What rule sharing did and holds.
   *
   * @param nowMs The time, ms: how long the digests have disagreed is counted to it.
   */
  stats(nowMs: number): FleetRulesStats {
    return rulesStats({
      table: this.#table,
      counts: this.#counts,
      step: this.#step,
      learning: this.learning,
      version: this.#newest,
      unproven: this.#server.unproven,
      transfers: this.#transfers.completed,
    }, nowMs);
  }

  /** The wall clock in whole ms: a version's clock is a whole number, as the wire carries it. */
  #wallMs(nowMs: number): number {
    return Math.floor(nowMs + this.#options.wallOffsetMs);
  }

  /** Merges a peer's entry; applies it if it is newer. Returns whether it was. */
  #take(nowMs: number, from: Sender, entry: RuleEntry, wallMs: number): boolean {
    const what = `${entry.kind} ${JSON.stringify(entry.className)}` +
      (entry.key === "" ? "" : ` ${JSON.stringify(entry.key)}`);
    if (versionMs(entry.version) > wallMs + MAX_CLOCK_SKEW_MS) {
      this.#counts.refused++;
      this.#counts.refusal(
        from,
        `${what}: stamped more than ${MAX_CLOCK_SKEW_MS} ms ahead of this clock`,
      );
      return false;
    }
    if (entrySize(entry) > MAX_ENTRY_BYTES) {
      this.#counts.refused++;
      this.#counts.refusal(from, `${what}: larger than a page`);
      return false;
    }
    const outcome = this.#table.merge(entry, wallMs);
    if (outcome === "stale") {
      this.#counts.refused++;
      this.#counts.refusal(from, `${what}: stale, no newer than a removal this member has let go`);
    }
    if (outcome === "full") {
      this.#counts.full++;
      this.#counts.refusal(from, `${what}: the table is full (maxEntries)`);
    }
    if (outcome !== "newer") return false;
    this.#clock = Math.max(this.#clock, entry.version.clock);
    this.#newest = Math.max(this.#newest, entry.version.clock);
    this.#counts.applied++;
    this.#gossip.changed(nowMs);
    this.#options.apply(entry, nowMs);
    return true;
  }

  /**
   * Tells every peer that shares rules, in a datagram of its own (the
   * header: 14 bytes of rules), that this member is ahead, rather than
   * waiting for probes to reach each: a bulk change made here is pulled
   * by all within a period. Once a window, only for changes made here.
   */
  #nudge(): void {
    this.#nudgeDue = false;
    const digest = this.#table.digest();
    for (const peer of this.#peers.values()) {
      if (!peer.speaks) continue;
      const writer = new SectionWriter(RULES_HEADER_BYTES, this.learning, digest, true);
      this.#sends.push({ to: peer.address, bytes: writer.finish(), bare: false });
    }
  }
}

/** An origin as a set's key. */
function originKey(origin: Origin): string {
  return `${origin.hi}:${origin.lo}`;
}
