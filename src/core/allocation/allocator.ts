/**
 * Allocation: each node's share of every hot key's limit, from the demand
 * the nodes gossip. It plugs into membership as its extension (demand
 * reports ride on the datagrams of membership's probes, no datagram of
 * their own) and into the enforcer through the slots of hot keys and the
 * book's cold scale.
 *
 * A hot key's share on node i: a floor R·β/N reserved for every counted
 * member, plus R·(1 − β)·d_i/Σd, or, where the key is offered less than
 * R·(1 − β), its demand d_i and an even part of the rest (split.ts). A key
 * that has just turned hot here, or woken here, settles first, and while
 * the node is held (joining, learning, without quorum, members full) every
 * key runs at the floor (settling.ts). Cold keys run at R·α/N and cost no
 * network. This file holds the allocator's face to membership and the
 * node, its hot set, and the rule each tick reshares a hot key by; a hot
 * key's record and own demand are hot_key.ts's.
 *
 * @module
 */

import { COLD_FRACTION, FLOOR_FRACTION } from "../options.ts";
import { memberIdText } from "../../proto/member_id.ts";
import type { Enforcer } from "../enforcer.ts";
import { hashId } from "../hash.ts";
import type { Slot } from "../keytable.ts";
import type { MemberChange, MembershipExtension } from "../membership/extension.ts";
import type { Peer, Sender } from "../../proto/mod.ts";
import type { PartitionPolicy } from "../partition.ts";
import type { LimitBook } from "../rules.ts";
import { ruleOf } from "../rule.ts";
import { demandIn, type HeardReport, HeardReports } from "./heard.ts";
import { CountedMembers, type Headcount } from "./members.ts";
import { split } from "./split.ts";
import { phaseOf, spreadPhase, watchPhase } from "./phase.ts";
import {
  COOLDOWN_MS,
  cooledDown,
  DEMAND_TAU_MS,
  type HotKey,
  newHotKey,
  OwnDemand,
} from "./hot_key.ts";
import {
  type Holds,
  joiners,
  NO_JOINERS,
  NodeHolds,
  settleTimeMs,
  settlingShare,
  wake,
} from "./settling.ts";
import {
  checkHotKeys,
  checkReports,
  type DemandGroup,
  encodeReports,
  fitGroup,
  groupBytes,
  GroupReader,
  SECTION_HEADER_BYTES,
} from "./report.ts";

/** Tunables of allocation; the defaults are the design's. */
export interface AllocatorOptions {
  /** What a lost member still counts for. */
  readonly policy: PartitionPolicy;
  /** Keys coordinated at once, 1 to 64 (the records a report holds). */
  readonly hotKeys: number;
  /** The protocol period: a round of demand reports. */
  readonly protocolPeriodMs: number;
  /** The cold fraction α ({@link COLD_FRACTION}). */
  readonly alpha?: number;
  /** The floor fraction β ({@link FLOOR_FRACTION}). */
  readonly beta?: number;
  /** How long a hot key stays cool before it is demoted (5 s, `COOLDOWN_MS`). */
  readonly cooldownMs?: number;
  /** The time constant of the demand estimate (1 s, `DEMAND_TAU_MS`). */
  readonly demandTauMs?: number;
  /**
   * Whether to pass on other nodes' fresh reports (default true). Without
   * relay, news of a node reaches only the peers it probes or is probed by:
   * O(N) rounds to reach all. Kept as an option to measure the difference.
   */
  readonly relay?: boolean;
  /**
   * Whether each key's burst follows this node's share of it, so that the
   * fleet's bursts add up to one (`GuardOptions.sharedBurst`); unset, as
   * the fleet's size says for each limit (`sharesBurstAt`).
   */
  readonly sharedBurst?: boolean;
}

/** What allocation tells `stats()`. */
export interface AllocationStats {
  /** N, the members the limit is shared over. */
  readonly countedSize: number;
  /** Keys coordinated with the peers. */
  readonly hotKeys: number;
  /** Peers have not yet heard this node's demand. */
  readonly learning: boolean;
  /** Under Quorum, no majority in sight. */
  readonly withoutQuorum: boolean;
  /** Whether every key is held at the floor now. */
  readonly held: boolean;
  /** Milliseconds since the last round. */
  readonly sinceLastRoundMs: number;
  /** Records of hot keys left out of this node's reports for want of room, summed over reports. */
  readonly cutRecords: number;
}

/** One member's part of a hot key, as this node reckons it. */
export interface MemberShare {
  /** The member's ID, 16 hexadecimal digits. */
  readonly id: string;
  /** Its smoothed demand, requests a second: this node's own, or as last reported. */
  readonly demand: number;
  /**
   * Its share, requests a second: this node's as applied; a peer's by the
   * same rule from the same sums (a peer's own may differ while reports travel).
   */
  readonly share: number;
}

/** A hot key and how its limit is split, as this node sees it. */
export interface HotKeyView {
  /** The key's class; `""` is the default. */
  readonly className: string;
  /** The key. */
  readonly key: string;
  /** The fleet-wide limit, requests a second. */
  readonly limitPerSec: number;
  /** This node first, then each counted peer whose latest report names the key. */
  readonly members: readonly MemberShare[];
}

/** See the module doc. */
export class Allocator implements MembershipExtension {
  readonly #book: LimitBook;
  readonly #enforcer: Enforcer;
  readonly #selfId: { readonly hi: number; readonly lo: number };
  readonly #selfKey: string;
  readonly #members: CountedMembers;
  readonly #hot = new Map<number, HotKey>();
  readonly #reports: HeardReports;
  readonly #remoteHot = new Map<number, number>(); // hash id → last heard, ms
  readonly #alpha: number;
  readonly #beta: number;
  readonly #cooldownMs: number;
  readonly #own: OwnDemand;
  readonly #holds = new NodeHolds();
  readonly #maxHot: number;
  readonly #periodMs: number;
  readonly #relay: boolean;
  #view: Headcount;
  #cutRecords = 0;
  readonly #life: () => number;

  /**
   * An allocator for the node `self`: its member ID, and its life (see
   * `Sender.life`), which its reports carry; read once the node exists.
   */
  constructor(
    book: LimitBook,
    enforcer: Enforcer,
    self: { readonly id: { hi: number; lo: number }; readonly life: () => number },
    options: AllocatorOptions,
  ) {
    const selfId = self.id;
    this.#life = self.life;
    this.#book = book;
    this.#enforcer = enforcer;
    this.#selfId = selfId;
    this.#selfKey = memberIdText(selfId);
    this.#members = new CountedMembers(options.policy);
    this.#reports = new HeardReports(this.#members, options.protocolPeriodMs);
    this.#alpha = options.alpha ?? COLD_FRACTION;
    this.#beta = options.beta ?? FLOOR_FRACTION;
    this.#cooldownMs = options.cooldownMs ?? COOLDOWN_MS;
    this.#own = new OwnDemand(options.protocolPeriodMs, options.demandTauMs ?? DEMAND_TAU_MS);
    this.#maxHot = checkHotKeys(options.hotKeys);
    this.#periodMs = options.protocolPeriodMs;
    this.#relay = options.relay ?? true;
    this.#view = this.#members.view(0);
    // Held until the first tick says otherwise: a check before it knows
    // nothing of the fleet, and must not spend the fleet's limit.
    book.setScale(this.#beta);
    book.setSharedBurst(options.sharedBurst);
    enforcer.setStartLean(true, 0);
  }

  /** Membership's news of a member. */
  memberChanged(change: MemberChange): void {
    const renewed = this.#members.apply(change);
    const state = change.member.state;
    // A new life's figures start afresh: its earlier life's say nothing of it.
    if (renewed || state === "left" || state === "forgotten") {
      this.#reports.forget(change.member.id.toString());
    }
  }

  /** The demand section for a datagram to `to`, within `maxBytes`. */
  outgoing(nowMs: number, to: Peer, maxBytes: number): Uint8Array | undefined {
    // The own group goes first and whole if it can; cut to what fits if not,
    // counted, rather than sent as nothing (or thrown) at all.
    const fitted = fitGroup(this.#ownGroup(), maxBytes);
    this.#cutRecords += fitted.cut;
    const own = fitted.group;
    if (own === undefined) return undefined;
    const budget = maxBytes - SECTION_HEADER_BYTES - groupBytes(own.records.length);
    // Relay others' fresh reports, round-robin, so that news from any node
    // reaches all in about log N periods rather than N.
    const relayed = this.#relay ? this.#reports.relayed(nowMs, to.id, budget) : [];
    return encodeReports([own], relayed);
  }

  /** A demand section another node sent. Malformed sections are dropped whole. */
  incoming(nowMs: number, _from: Sender, bytes: Uint8Array): void {
    if (checkReports(bytes) !== undefined) return;
    const self = this.#selfId;
    for (const group = new GroupReader(bytes); group.next();) {
      if (group.originHi === self.hi && group.originLo === self.lo) continue;
      const report = this.#reports.take(group, nowMs);
      // Most groups are copies of reports held, and taken as none.
      if (report === undefined) continue;
      for (const { id, demand } of report.demands) {
        if (demand > 0 && !this.#hot.has(id)) this.#remoteHot.set(id, nowMs);
      }
    }
  }

  /**
   * Brings demand, the hot set and every share up to date. Called from the
   * node's timer, a few times a protocol period.
   */
  tick(nowMs: number, holds: Holds): void {
    const dtMs = this.#own.tick(nowMs, this.#hot.values());
    this.#view = this.#members.view(nowMs);
    const settle = settleTimeMs(this.#periodMs, this.#view.inSight);
    this.#holds.update(nowMs, holds, this.#view, settle);
    const n = holds.membersFull
      ? Math.max(this.#view.countedSize, holds.maxMembers)
      : this.#view.countedSize;
    this.#book.setScale((this.#holds.held ? this.#beta : this.#alpha) / n);
    this.#book.setFleetSize(n, this.#alpha);
    this.#enforcer.setStartLean(this.#holds.lean, nowMs);
    this.#own.measure(this.#hot.values(), dtMs);
    this.#promote(nowMs, settle);
    for (const hot of this.#hot.values()) this.#reshare(hot, n, nowMs, settle);
  }

  /**
   * From now on, hold every key at the floor: the node's background task
   * has died, and shares its peers no longer count must not go on.
   */
  fail(nowMs: number, holds: Holds): void {
    this.#holds.fail();
    this.tick(nowMs, holds);
  }

  /** What `stats()` shows of allocation. */
  stats(nowMs: number): AllocationStats {
    return {
      countedSize: this.#view.countedSize,
      hotKeys: this.#hot.size,
      learning: this.#holds.learning,
      withoutQuorum: this.#view.withoutQuorum,
      held: this.#holds.held,
      sinceLastRoundMs: Math.max(0, nowMs - this.#own.lastRoundMs),
      cutRecords: this.#cutRecords,
    };
  }

  #promote(nowMs: number, settleMs: number): void {
    for (const slot of this.#enforcer.candidates.take()) {
      // Nearing the cold share: at least that much demand, to start from.
      const demand = slot.rule.limit.ratePerSec() * this.#book.scale;
      if (slot.hash !== undefined && slot.hot === undefined) {
        this.#makeHot(slot, demand, nowMs, settleMs);
      }
    }
    for (const [id, heardMs] of this.#remoteHot) {
      if (this.#hot.has(id) || nowMs - heardMs > this.#cooldownMs) {
        this.#remoteHot.delete(id);
        continue;
      }
      const slot = this.#enforcer.hashes?.get(id);
      if (slot !== undefined && slot.hot === undefined) this.#makeHot(slot, 0, nowMs, settleMs);
    }
  }

  #makeHot(slot: Slot, demand: number, nowMs: number, settleMs: number): void {
    if (this.#hot.size >= this.#maxHot) return;
    const hot = newHotKey(slot, demand, nowMs + settleMs, phaseOf(this.#selfId, slot.hash!));
    slot.hot = hot;
    this.#hot.set(hashId(hot.hash), hot);
  }

  #reshare(hot: HotKey, n: number, nowMs: number, settleMs: number): void {
    const slot = hot.slot;
    const resolved = this.#book.resolve(slot.className, slot.key);
    const limitPerSec = resolved.limit.ratePerSec();
    const id = hashId(hot.hash);
    const coldShare = (limitPerSec * this.#alpha) / n;
    wake(hot, coldShare, nowMs, settleMs);
    // A peer's report that does not name the key, made before the key's
    // news has had time to reach it, says nothing of the key (heard.ts).
    const heard = this.#reports.demandOf(id, this.#view, nowMs, {
      settledMs: hot.settlingUntilMs,
      ownAt: (ms) => this.#own.demandAt(hot, ms),
      breaksMs: this.#own.roundsAtMs,
    });
    const floor = (limitPerSec * this.#beta) / n;
    // The peers' figures are as of when their reports were made, each at
    // its own age. Against them this node weighs its own demand as it was
    // when each was made, averaged (or as of now, if lower: the strict
    // side while demand falls): its fresh figure against their stale ones
    // takes too much while demand rises everywhere, and a figure of one
    // time against figures of many times is biased wherever demand bends:
    // as of their mean time, right after a 100× jump, its own was still
    // from before it while their sum was mostly after, and a fleet of 100
    // with shared bursts fell to 0.43 R for a second.
    //
    // "Lower" means lower by more than half the step one request puts in
    // the smoothed figure, which rises by that step at each request and
    // sinks between: at a few requests a second that swing is as large as
    // the figure, the lower of the two took the low side of it, and a
    // fleet of 1000 offered 2 requests a second an instance admitted 0.94 R.
    const own = Math.min(hot.demand + this.#own.halfStep, heard.own ?? hot.demand);
    // Members that have just joined take R/N, not their demand, while they
    // settle: the rest is split among the others (settling.ts, joiners).
    const shared = this.#book.sharesBurst(resolved.limit);
    const held = this.#holds.held;
    const joined = shared && !held
      ? joiners(this.#members, this.#reports, id, { nowMs, periodMs: this.#periodMs, settleMs })
      : NO_JOINERS;
    const named = heard.others - joined.demand;
    // Peers of whom nothing is known of the key count for the mean of those
    // whose reports say something (heard.ts, demandOf).
    const others = named + (heard.unknown * named) / Math.max(1, heard.known - joined.named);
    const total = own + others;
    const spare = limitPerSec * (1 - this.#beta) - joined.count * (limitPerSec / n - floor);
    const splitN = n - joined.count;
    let share = held ? floor : split(spare, floor, own, total, splitN);
    // Until the peers' reports of a new hot key have had time to arrive, its
    // sums say little (alone in them, it would take nearly all), and it runs
    // at a settling share instead (settling.ts).
    if (nowMs < hot.settlingUntilMs) {
      share = settlingShare(hot, share, limitPerSec, n, shared, this.#alpha);
    }
    // Cool everywhere for the cooldown: back to the cold share.
    if (cooledDown(hot, others, coldShare, nowMs, this.#cooldownMs)) {
      this.#hot.delete(id);
      slot.hot = undefined;
      slot.epoch = -1; // resolve the cold rule on the next check
      return;
    }
    hot.last = { share, spare, floor, total, n: splitN, limitPerSec };
    const scale = share / limitPerSec;
    const shadow = resolved.shadow &&
      ruleOf(
        resolved.shadow.limit,
        undefined,
        false,
        scale,
        this.#book.sharesBurst(resolved.shadow.limit),
      );
    hot.rule = ruleOf(resolved.limit, shadow, resolved.unknownClass, scale, shared);
    watchPhase(hot.phase, slot);
    this.#enforcer.setSlotRule(slot, hot.rule, nowMs);
    spreadPhase(hot.phase, slot, this.#enforcer, nowMs, shared && nowMs < hot.settlingUntilMs);
  }

  /**
   * The hot keys, each with this node's demand and share and those of the
   * counted peers that report it: the picture of shares following demand.
   */
  hotKeys(): HotKeyView[] {
    const views: HotKeyView[] = [];
    for (const [id, hot] of this.#hot) {
      const { share, spare, limitPerSec, floor, total, n } = hot.last;
      const members: MemberShare[] = [{ id: this.#selfKey, demand: hot.demand, share }];
      for (const [key, o] of this.#reports.entries()) {
        const demand = demandIn(o, id);
        if (demand === undefined || !this.#view.counts(key)) continue;
        members.push({ id: key, demand, share: split(spare, floor, demand, total, n) });
      }
      views.push({ className: hot.slot.className, key: hot.slot.key, limitPerSec, members });
    }
    return views;
  }

  /** The demand reports held, by origin ID, changed in place (`heard.ts`): for `relay_room.ts`. */
  readonly heardReports = (): IterableIterator<[string, HeardReport]> => this.#reports.entries();

  #ownGroup(): DemandGroup {
    const records = [];
    for (const hot of this.#hot.values()) records.push({ hash: hot.hash, demand: hot.demand });
    return { origin: this.#selfId, life: this.#life(), round: this.#own.round, ageMs: 0, records };
  }
}
