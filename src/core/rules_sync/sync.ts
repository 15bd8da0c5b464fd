/**
 * One member's side of sharing rules: its table, its clock, the recent
 * changes it gossips, the transfer it pulls when it is new or disagrees
 * with a peer, and the pages it answers with. Sans I/O: the fleet node
 * hands it the rules sections of datagrams and takes what it sends; the
 * design is in `mod.ts`.
 *
 * @module
 */

import type { Peer, Sender } from "../../proto/mod.ts";
import { MAX_MESSAGE_BYTES } from "../../proto/mod.ts";
import type { MemberChange } from "../membership/extension.ts";
import {
  BlockedUntil,
  HLC_TICKS_PER_MS,
  MAX_CLOCK,
  misfit,
  type Origin,
  type RuleEntry,
  type RuleKind,
  versionMs,
} from "./entry.ts";
import { ChangeGossip } from "./gossip.ts";
import { differs, hear, lowestHeard, type PeerState, sameDigest, unheard } from "./peer.ts";
import { Pull } from "./pull.ts";
import { PageServer, type RulesSend } from "./serve.ts";
import type { HashKey } from "../hash.ts";
import { RuleTable } from "./table.ts";
import { digestHex, StepWatch } from "./step.ts";
import { Counts, type FleetRulesStats } from "./stats.ts";
import {
  decodeRules,
  type Digest,
  entrySize,
  NO_TICKET,
  PAGE_HEADER_BYTES,
  PULL_BYTES,
  RULES_HEADER_BYTES,
  SectionWriter,
} from "./wire.ts";

/** How long a removal is kept, by the clock of its version: an hour. See `mod.ts`. */
export const TOMBSTONE_MS = 3_600_000;
/** A change stamped further ahead of this member's wall clock is refused: clocks must agree within a minute. */
export const MAX_CLOCK_SKEW_MS = 60_000;
/** Bytes of the rules section of a datagram of its own (a page, a request). */
export const RULES_DATAGRAM_BYTES = MAX_MESSAGE_BYTES - 160;
/** The largest entry shared: it must fit in a page. */
export const MAX_ENTRY_BYTES = RULES_DATAGRAM_BYTES - RULES_HEADER_BYTES - PAGE_HEADER_BYTES;
/** Protocol periods two members disagree before one pulls the other's table. */
const DISAGREE_PERIODS = 5;
/** Periods between background transfers at first; doubled while they do not end the disagreement. */
const BACKOFF_PERIODS = 10;
/** Periods a joined newcomer waits to hear a member that shares rules before it stops learning. */
const SILENT_PERIODS = 50;
/**
 * Periods a joined newcomer that hears only learners waits before the one
 * of lowest ID among them stops learning (the others then learn from it):
 * time for membership to bring in a member that knows the rules.
 */
const LEARNERS_PERIODS = 5;

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
  #clock = 0;
  #newest = 0;
  #learning: boolean;
  #pull: Pull | undefined;
  #nextBackgroundMs = 0;
  #joinedAtMs: number | undefined;
  #backoffPeriods = BACKOFF_PERIODS;
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
    this.#learning = learning;
  }

  /** Whether this member is still learning the fleet's rules. */
  get learning(): boolean {
    return this.#learning;
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
    const t = this.#table;
    if (!t.full) return "";
    return `the fleet rules table is full: ${t.size} of ${t.bound} entries, ${t.own} set here, ` +
      `${t.strangers} from origins that are no member (at most ${t.bound - t.reserved}; ` +
      `${t.reserved} kept for members' changes)`;
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
    if (this.#pull?.peer.toString() === key) this.#pull = undefined;
  }

  /**
   * The rules section for a probe or an ack: the digest, then recent
   * changes, the least sent first, as room allows.
   */
  outgoingRules(nowMs: number, _to: Peer, maxBytes: number): Uint8Array | undefined {
    if (maxBytes < RULES_HEADER_BYTES) return undefined;
    const ahead = this.#gossip.ahead(nowMs);
    const writer = new SectionWriter(maxBytes, this.#learning, this.#table.digest(), ahead);
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
    const pull = this.#pull?.peer.toString() === key ? this.#pull : undefined;
    if (section.page && pull) {
      for (const entry of section.page.entries) {
        this.#take(nowMs, from, entry, wallMs);
      }
      pull.arrived(section.page);
    }
    const mine = this.#table.digest();
    hear(peer, nowMs, section, mine, this.#learning);
    // A background transfer is over once the tables agree, wherever it is in the peer's table.
    if (pull && (pull.done || (!pull.learning && sameDigest(peer.digest, mine)))) {
      this.#finish(nowMs, pull);
    } else if (section.page && pull?.answered) this.#ask(nowMs, pull);
    this.#server.answer(this.#table, this.#learning, mine, (send) => this.#sends.push(send));
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
    const periodMs = this.#options.protocolPeriodMs;
    this.#table.expire(this.#wallMs(nowMs));
    if (this.#pull?.failed) {
      // Its answers are not reaching here (withheld until this address is
      // proven there, say): the next transfer tries another peer first.
      const peer = this.#peers.get(this.#pull.peer.toString());
      if (peer) peer.failedAtMs = nowMs;
      this.#pull = undefined;
    }
    if (this.#nudgeDue) this.#nudge();
    if (joining) this.#joinedAtMs = undefined;
    else this.#joinedAtMs ??= nowMs;
    // Learning ends on a peer that knows the fleet's rules, one that is not
    // learning itself: a learner's table is as empty as this one. With none
    // (alone, among members that share no rules in a rollout, or among
    // learners only, as when the whole fleet restarts), past the time a
    // probe round takes to hear one, there is nobody who knows more.
    const knowing = (p: PeerState) => p.speaks && !p.learning;
    const joinedMs = nowMs - (this.#joinedAtMs ?? nowMs);
    const none = !this.#pickPeer(knowing);
    const alone = none && joinedMs >= SILENT_PERIODS * periodMs;
    // Among learners only, one must go first: the lowest ID heard, once a
    // probe round has had time to bring in a member that knows more.
    const first = none && joinedMs >= LEARNERS_PERIODS * periodMs &&
      lowestHeard(this.#options.self, this.#peers.values());
    if (this.#learning && !joining && (this.#peers.size === 0 || alone || first)) {
      this.#learning = false;
    }
    if (!this.#pull && this.#learning) {
      const peer = this.#pickPeer(knowing);
      if (peer) this.#pull = new Pull(peer.address, true);
    }
    const mine = this.#table.digest();
    const window = DISAGREE_PERIODS * periodMs;
    // Agreement with every live peer ends any back-off: the next
    // disagreement is a new one, pulled after five periods again.
    if (this.#step.update(nowMs, this.#peers.values(), mine, this.#learning)) {
      this.#backoffPeriods = BACKOFF_PERIODS;
    }
    if (this.#pull && !this.#pull.learning) {
      // Gossip may have brought the rest: nothing left to pull.
      const peer = this.#peers.get(this.#pull.peer.toString());
      if (peer && sameDigest(peer.digest, mine)) this.#finish(nowMs, this.#pull);
    }
    if (!this.#pull && !this.#learning && nowMs >= this.#nextBackgroundMs) {
      let peer: PeerState | undefined;
      // Of those it differs from by fresh evidence, the one holding the most
      // rules: after a bulk change, likely the one that made it.
      for (const p of this.#peers.values()) {
        if (differs(p, nowMs, mine, window) && (!peer || p.digest.live > peer.digest.live)) {
          peer = p;
        }
      }
      if (peer) this.#pull = new Pull(peer.address, false);
    }
    if (this.#pull) this.#ask(nowMs, this.#pull);
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
    const d = this.#table.digest();
    const c = this.#counts;
    return {
      shared: true,
      learning: this.#learning,
      version: this.#newest,
      digest: digestHex(d),
      outOfStep: this.#step.outOfStep(nowMs),
      apartMs: this.#step.apartMs(nowMs),
      outOfStepReason: this.#step.reason(nowMs, d),
      live: d.live,
      removed: this.#table.size - d.live,
      applied: c.applied,
      refused: c.refused,
      malformed: c.malformedCount,
      strangers: c.strangers,
      skippedParts: c.skippedParts,
      unproven: this.#server.unproven,
      full: c.full,
      unshared: c.unshared,
      entries: this.#table.size,
      bound: this.#table.bound,
      reserved: this.#table.reserved,
      own: this.#table.own,
      peers: this.#table.size - this.#table.own,
      strangerEntries: this.#table.strangers,
      tableFull: this.#table.full,
      tableFullReason: this.fullReason(),
      transfers: c.transfers,
      refusals: c.refusals,
      lastRefusal: c.lastRefusal,
    };
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
      const writer = new SectionWriter(RULES_HEADER_BYTES, this.#learning, digest, true);
      this.#sends.push({ to: peer.address, bytes: writer.finish(), bare: false });
    }
  }

  /** The peer that fits whose last transfer failed longest ago (or never did). */
  #pickPeer(fits: (peer: PeerState) => boolean): PeerState | undefined {
    let best: PeerState | undefined;
    for (const peer of this.#peers.values()) {
      if (!fits(peer)) continue;
      if (peer.failedAtMs === undefined) return peer;
      if (!best || peer.failedAtMs < best.failedAtMs!) best = peer;
    }
    return best;
  }

  #ask(nowMs: number, pull: Pull): void {
    const from = pull.due(nowMs, 2 * this.#options.protocolPeriodMs);
    if (from === undefined) return;
    // Without the peer's ticket yet, the request pays for its one-page answer (`serve.ts`).
    const ticketed = pull.ticket !== NO_TICKET;
    const writer = new SectionWriter(
      ticketed ? RULES_HEADER_BYTES + PULL_BYTES : RULES_DATAGRAM_BYTES,
      this.#learning,
      this.#table.digest(),
    );
    writer.pull(from, pull.ticket);
    if (!ticketed) writer.pad();
    this.#sends.push({ to: pull.peer, bytes: writer.finish(), bare: false });
  }

  #finish(nowMs: number, pull: Pull): void {
    this.#pull = undefined;
    this.#counts.transfers++;
    const peer = this.#peers.get(pull.peer.toString());
    if (pull.learning) {
      // A peer that restarted meanwhile, learning now, taught nothing: ask another.
      if (peer && !peer.learning) this.#learning = false;
      return;
    }
    const stillApart = peer !== undefined && !sameDigest(peer.digest, this.#table.digest());
    this.#backoffPeriods = stillApart
      ? Math.min(this.#backoffPeriods * 2, TOMBSTONE_MS / 4 / this.#options.protocolPeriodMs)
      : BACKOFF_PERIODS;
    if (peer) peer.disagreeSinceMs = undefined;
    this.#nextBackgroundMs = nowMs + this.#backoffPeriods * this.#options.protocolPeriodMs;
  }
}

/** An origin as a set's key. */
function originKey(origin: Origin): string {
  return `${origin.hi}:${origin.lo}`;
}
