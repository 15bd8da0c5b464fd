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
 * that has just turned hot here, or woken here, settles first (#settling,
 * #wake). Cold keys run at R·α/N and cost no network. While the node is
 * held (joining, learning, without quorum, members full) every key runs at
 * the floor.
 *
 * @module
 */

import { COLD_FRACTION, FLOOR_FRACTION } from "../options.ts";
import { memberIdText } from "../../proto/member_id.ts";
import type { Enforcer } from "../enforcer.ts";
import { type Hash64, hashId } from "../hash.ts";
import type { HotShare, Slot } from "../keytable.ts";
import type { MemberChange, MembershipExtension } from "../membership/extension.ts";
import type { Peer, Sender } from "../../proto/mod.ts";
import type { PartitionPolicy } from "../partition.ts";
import type { LimitBook } from "../rules.ts";
import { type Rule, ruleOf } from "../rule.ts";
import { demandIn, HeardReports } from "./heard.ts";
import { CountedMembers, type Headcount } from "./members.ts";
import { split } from "./split.ts";
import { type Phase, phaseOf, spreadPhase, watchPhase } from "./phase.ts";
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

/** Why every key is held at the floor, if it is. */
export interface Holds {
  /** Configured with seeds, and no peer ever reached (membership's `joining`). */
  readonly joining: boolean;
  /** A newcomer was refused for a full member table lately. */
  readonly membersFull: boolean;
  /** The member table's bound, N's least value while full. */
  readonly maxMembers: number;
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

interface HotKey extends HotShare {
  rule: Rule;
  readonly slot: Slot;
  readonly hash: Hash64;
  /** The slot's request counter when demand was last measured. */
  seenRequests: number;
  /** Smoothed local demand, requests a second. */
  demand: number;
  /** The demand at the start of each of the last rounds, by round modulo its length. */
  readonly history: Float64Array;
  /**
   * Until when the key runs at its settling share, while the peers' reports
   * of it arrive: from when it turned hot here, or woke here (`quiet`).
   */
  settlingUntilMs: number;
  /** Whether this node's own demand of the key has sunk below the cool point. */
  quiet: boolean;
  /** Whether the key settles having woken here, rather than having just turned hot. */
  woke: boolean;
  /** The last reshare's figures, for {@link Allocator.hotKeys}: share, and the split's inputs. */
  last: { share: number; limitPerSec: number; floor: number; total: number; n: number };
  /** Since when the key has been cool everywhere; undefined while busy. */
  coolSinceMs: number | undefined;
  /** Where this node's admissions of the key fall among its peers' (phase.ts). */
  readonly phase: Phase;
}

/**
 * Rounds of a hot key's own demand kept, to compare like with like: as far
 * back as the reports held can have been made. At 1000 nodes a datagram
 * relays some 40 of them, so each origin's news comes every 2 to 3 s and a
 * report held is often older than that; with 16 rounds (3.2 s) this node's
 * figure for those older times was the oldest kept, too high while demand
 * rose, and four seconds after a jump the fleet's shares added up to 1.1 R.
 */
const HISTORY_ROUNDS = 64;

/**
 * How long a hot key must stay cool, here and at every peer, before it is
 * demoted to its cold share: long enough to ride out a lull between bursts,
 * short enough that a key gone quiet frees its place in the hot set soon.
 */
const COOLDOWN_MS = 5_000;

/**
 * The time constant of the smoothed demand: a step in a key's rate is 63%
 * in after this, 95% after three. Shorter follows faster and jitters more.
 */
const DEMAND_TAU_MS = 1_000;

/**
 * A hot key is cool once its demand here and the others' are each below
 * this fraction of the cold share α·R/N. Below 1, so that a key nominated
 * for nearing its cold share is not cool the moment it turns hot: the gap
 * is the hysteresis that keeps keys from flapping between hot and cold.
 */
const COOL_FRACTION = 0.5;

/**
 * Rounds a member that has just joined, or a key that has just turned hot,
 * waits on top of log2 N before it trusts the sums: one to send, one to be
 * answered, one of slack for a lost datagram.
 */
const SETTLE_ROUNDS = 3;

// Relations the constants above must keep, checked when the module loads.
if (!(COOL_FRACTION > 0 && COOL_FRACTION < 1)) {
  throw new Error("allocator: COOL_FRACTION must be in (0, 1), below the nomination point");
}
if (!(3 * DEMAND_TAU_MS <= COOLDOWN_MS)) {
  // A key that stops must look cool (95% decayed) within the cooldown.
  throw new Error("allocator: the demand estimate must settle within COOLDOWN_MS");
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
  readonly #tauMs: number;
  /** Half the step one request puts in a key's smoothed demand, requests a second. */
  readonly #halfStep: number;
  readonly #maxHot: number;
  readonly #periodMs: number;
  readonly #relay: boolean;
  #round = 0;
  #lastRoundMs = -Infinity;
  /** When each of the last rounds started, the current one first. */
  readonly #roundsAtMs = new Float64Array(HISTORY_ROUNDS).fill(-Infinity);
  #lastTickMs: number | undefined;
  #joinedAtMs: number | undefined;
  #quorumAtMs = -Infinity;
  #failed = false;
  #view: Headcount;
  #held = true;
  #learning = false;
  /** New keys start lean (joining, learning). */
  #lean = false;
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
    this.#tauMs = options.demandTauMs ?? DEMAND_TAU_MS;
    this.#halfStep = 500 / this.#tauMs;
    this.#maxHot = checkHotKeys(options.hotKeys);
    this.#periodMs = options.protocolPeriodMs;
    this.#relay = options.relay ?? true;
    this.#view = this.#members.view(0);
    // Held until the first tick says otherwise: a check before it knows
    // nothing of the fleet, and must not spend the fleet's limit.
    book.setScale(this.#beta);
    book.setSharedBurst(options.sharedBurst);
    enforcer.setStartLean(true, 0);
    this.#lean = true;
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
    const dtMs = this.#lastTickMs === undefined ? 0 : nowMs - this.#lastTickMs;
    this.#lastTickMs = nowMs;
    if (nowMs - this.#lastRoundMs >= this.#periodMs) {
      this.#round = (this.#round + 1) >>> 0;
      this.#lastRoundMs = nowMs;
      this.#roundsAtMs.copyWithin(1, 0, HISTORY_ROUNDS - 1);
      this.#roundsAtMs[0] = nowMs;
      for (const hot of this.#hot.values()) hot.history[this.#round % HISTORY_ROUNDS] = hot.demand;
    }
    this.#view = this.#members.view(nowMs);
    this.#updateHolds(nowMs, holds);
    const n = holds.membersFull
      ? Math.max(this.#view.countedSize, holds.maxMembers)
      : this.#view.countedSize;
    this.#book.setScale((this.#held ? this.#beta : this.#alpha) / n);
    this.#book.setFleetSize(n, this.#alpha);
    this.#enforcer.setStartLean(this.#lean, nowMs);
    this.#measure(dtMs);
    this.#promote(nowMs, this.#settleMs());
    for (const hot of this.#hot.values()) this.#reshare(hot, n, nowMs);
  }

  /**
   * From now on, hold every key at the floor: the node's background task
   * has died, and shares its peers no longer count must not go on.
   */
  fail(nowMs: number, holds: Holds): void {
    this.#failed = true;
    this.tick(nowMs, holds);
  }

  /** What `stats()` shows of allocation. */
  stats(nowMs: number): AllocationStats {
    return {
      countedSize: this.#view.countedSize,
      hotKeys: this.#hot.size,
      learning: this.#learning,
      withoutQuorum: this.#view.withoutQuorum,
      held: this.#held,
      sinceLastRoundMs: Math.max(0, nowMs - this.#lastRoundMs),
      cutRecords: this.#cutRecords,
    };
  }

  #updateHolds(nowMs: number, holds: Holds): void {
    // Joining holds only a node that has never reached a peer (membership
    // keeps it so): one whose peers all went away is not new, and its
    // partition policy decides.
    const joining = holds.joining;
    if (joining) this.#joinedAtMs = undefined;
    else this.#joinedAtMs ??= nowMs;
    // Learning: until peers have had time to hear this node's demand, by
    // direct exchange and relay, which takes about log2 N rounds.
    // A node back from a minority is like a newcomer: its peers' figures of
    // it are stale, and so are its of them.
    if (this.#view.withoutQuorum) this.#quorumAtMs = Infinity;
    else if (this.#quorumAtMs === Infinity) this.#quorumAtMs = nowMs;
    const since = Math.max(
      this.#joinedAtMs ?? Infinity,
      this.#quorumAtMs === Infinity ? -Infinity : this.#quorumAtMs,
    );
    this.#learning = this.#joinedAtMs !== undefined && this.#view.inSight > 1 &&
      nowMs - since < this.#settleMs();
    this.#held = joining || this.#learning || this.#view.withoutQuorum || holds.membersFull ||
      this.#failed;
    this.#lean = joining || this.#learning;
  }

  #measure(dtMs: number): void {
    if (dtMs <= 0) return;
    const keep = Math.exp(-dtMs / this.#tauMs);
    for (const hot of this.#hot.values()) {
      const rate = ((hot.slot.requests - hot.seenRequests) * 1_000) / dtMs;
      hot.seenRequests = hot.slot.requests;
      hot.demand = keep * hot.demand + (1 - keep) * rate;
    }
  }

  /**
   * How long news takes to reach every peer: a round to send, and about
   * log2 N more by relay. A node that has just joined, or a key that has
   * just turned hot, waits that long before it trusts the sums.
   */
  #settleMs(): number {
    return this.#periodMs * (SETTLE_ROUNDS + Math.ceil(Math.log2(this.#view.inSight + 1)));
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
    const hot: HotKey = {
      seenRequests: slot.requests,
      rule: slot.rule,
      slot,
      hash: slot.hash!,
      demand,
      history: new Float64Array(HISTORY_ROUNDS).fill(demand),
      settlingUntilMs: nowMs + settleMs,
      quiet: false,
      woke: false,
      coolSinceMs: undefined,
      phase: phaseOf(this.#selfId, slot.hash!),
      last: { share: 0, limitPerSec: 0, floor: 0, total: 0, n: 1 },
    };
    slot.hot = hot;
    this.#hot.set(hashId(hot.hash), hot);
  }

  #reshare(hot: HotKey, n: number, nowMs: number): void {
    const slot = hot.slot;
    const resolved = this.#book.resolve(slot.className, slot.key);
    const limitPerSec = resolved.limit.ratePerSec();
    const id = hashId(hot.hash);
    const coldShare = (limitPerSec * this.#alpha) / n;
    this.#wake(hot, coldShare, nowMs);
    // A peer's report that does not name the key, made before the key's
    // news has had time to reach it, says nothing of the key (heard.ts).
    const heard = this.#reports.demandOf(id, this.#view, nowMs, {
      settledMs: hot.settlingUntilMs,
      ownAt: (ms) => this.#demandAt(hot, ms),
      breaksMs: this.#roundsAtMs,
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
    const own = Math.min(hot.demand + this.#halfStep, heard.own ?? hot.demand);
    // Peers of whom nothing is known of the key count for the mean of those
    // whose reports say something (heard.ts, demandOf).
    const others = heard.others + (heard.unknown * heard.others) / Math.max(1, heard.known);
    const total = own + others;
    let share = this.#held ? floor : this.#split(limitPerSec, floor, own, total, n);
    // Until the peers' reports of a new hot key have had time to arrive, its
    // sums say little (alone in them, it would take nearly all), and it runs
    // at a settling share instead (#settling).
    const shared = this.#book.sharesBurst(resolved.limit);
    if (nowMs < hot.settlingUntilMs) share = this.#settling(hot, share, limitPerSec, n, shared);
    // Cool everywhere for the cooldown: back to the cold share.
    const threshold = COOL_FRACTION * coldShare;
    if (hot.demand < threshold && others < threshold) hot.coolSinceMs ??= nowMs;
    else hot.coolSinceMs = undefined;
    if (hot.coolSinceMs !== undefined && nowMs - hot.coolSinceMs >= this.#cooldownMs) {
      this.#hot.delete(id);
      slot.hot = undefined;
      slot.epoch = -1; // resolve the cold rule on the next check
      return;
    }
    hot.last = { share, limitPerSec, floor, total, n };
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
   * A settling hot key's share, given the split's. With a shared burst, the
   * fair share R/N, which N nodes cannot pass between them, whatever the
   * split says: in a fleet forming its sums, a node's own figure and its
   * peers' are of different moments, the split of a node whose demand is far
   * above R/N fell below it, and a fleet of 200 admitted 0.91 R in the
   * second after traffic started. With a burst on each node, at most the
   * cold share for a key new here, whose headroom below R takes the bursts
   * every node spends when traffic starts; at most R/N for a key that woke,
   * whose peers hold it hot already and do not all wake at once: held at
   * its cold share, a fleet of 20 fell to 0.55 R after a jump.
   */
  #settling(hot: HotKey, share: number, limitPerSec: number, n: number, shared: boolean): number {
    if (shared) return limitPerSec / n;
    return Math.min(share, (limitPerSec * (hot.woke ? 1 : this.#alpha)) / n);
  }

  /**
   * A hot key whose demand here sank below the cool point (hot only for its
   * peers' demand) and has risen to its cold share again settles afresh, as
   * a key that has just turned hot: its own figure rises at once, its peers'
   * only as their reports come, and a peer whose key was cold names nothing
   * and counts for none. When a key hot at 1% of its load jumps 100×, the
   * nodes that held it hot before took several times R/N for a second or
   * two, and a fleet of 100 offered a request a second an instance held
   * shares adding up to 1.39 R.
   */
  #wake(hot: HotKey, coldShare: number, nowMs: number): void {
    if (hot.demand < COOL_FRACTION * coldShare) hot.quiet = true;
    else if (hot.quiet && hot.demand >= coldShare) {
      hot.quiet = false;
      hot.woke = true;
      hot.settlingUntilMs = Math.max(hot.settlingUntilMs, nowMs + this.#settleMs());
    }
  }

  /**
   * A hot key's own demand as of `atMs`, between the figures kept at the
   * starts of the last rounds (and the current one after the last start);
   * the oldest kept before those.
   */
  #demandAt(hot: HotKey, atMs: number): number {
    let later = hot.demand, laterMs = this.#lastTickMs ?? atMs;
    for (let k = 0; k < HISTORY_ROUNDS; k++) {
      const i = (this.#round - k + HISTORY_ROUNDS) % HISTORY_ROUNDS;
      const d = hot.history[i], ms = this.#roundsAtMs[k];
      // Before the first round there is nothing to go between.
      if (ms === -Infinity) return later;
      if (ms <= atMs) {
        return laterMs > ms ? d + ((later - d) * (atMs - ms)) / (laterMs - ms) : d;
      }
      later = d;
      laterMs = ms;
    }
    return later;
  }

  /** This node's split of a key's limit, or a peer's by the same rule (split.ts). */
  #split(limitPerSec: number, floor: number, demand: number, total: number, n: number): number {
    return split(limitPerSec * (1 - this.#beta), floor, demand, total, n);
  }

  /**
   * The hot keys, each with this node's demand and share and those of the
   * counted peers that report it: the picture of shares following demand.
   */
  hotKeys(): HotKeyView[] {
    const views: HotKeyView[] = [];
    for (const [id, hot] of this.#hot) {
      const { share, limitPerSec, floor, total, n } = hot.last;
      const members: MemberShare[] = [{ id: this.#selfKey, demand: hot.demand, share }];
      for (const [key, o] of this.#reports.entries()) {
        const demand = demandIn(o, id);
        if (demand === undefined || !this.#view.counts(key)) continue;
        members.push({ id: key, demand, share: this.#split(limitPerSec, floor, demand, total, n) });
      }
      views.push({ className: hot.slot.className, key: hot.slot.key, limitPerSec, members });
    }
    return views;
  }

  #ownGroup(): DemandGroup {
    const records = [];
    for (const hot of this.#hot.values()) records.push({ hash: hot.hash, demand: hot.demand });
    return { origin: this.#selfId, life: this.#life(), round: this.#round, ageMs: 0, records };
  }
}
