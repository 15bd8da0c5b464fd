/**
 * Failure detection: one probe per protocol period in randomised round-robin
 * order, indirect probes through helpers when the direct one goes
 * unanswered, the helper's side of indirect probes, and Lifeguard's local
 * health score ("awareness"), which slows a node down when it is the one
 * that is slow, rather than letting it accuse healthy peers.
 *
 * Why this file is over 400 lines: a node's probes and its help with
 * others' probes share the sequence numbers, the deadlines and the
 * datagrams (a relay's ack ends a probe of the helper's own or is passed
 * on), and the probe's rules (retries, helpers, what counts as evidence,
 * the health score) are read together; split, each half would reach into
 * the other's state.
 *
 * @module
 */

import type { Address, Peer } from "../../proto/mod.ts";
import type { Prng } from "../prng.ts";
import { type MembershipConfig, suspicionBoundsMs } from "./config.ts";
import { ProbeOrder } from "./order.ts";
import { RoundTrip } from "./rtt.ts";
import type { Member } from "./table.ts";

/** What the node sends on the prober's behalf: a message's type and fields. */
export type SendFields =
  | { readonly type: "ping"; readonly seq: number; readonly requester?: Peer }
  | { readonly type: "ack" | "nack"; readonly seq: number }
  | { readonly type: "pingReq"; readonly seq: number; readonly target: Peer }
  | { readonly type: "join"; readonly page: number }
  | { readonly type: "gossip"; readonly rules?: Uint8Array };

/** The node's side of the prober. */
export interface ProberHost {
  /**
   * Sends a message, with piggybacked news, to `to`; with `relay`, the
   * bytes of the request to probe that it is sent for, which bound it (see
   * `gate.ts`), and the target whose record goes first (a relayed ack's).
   */
  send(nowMs: number, to: Address, fields: SendFields, relay?: RelayedFor): void;
  /** Sends the ping of a look (see `probeNext`), lean: the suspicion it carries, no other news. */
  look(nowMs: number, to: Address, seq: number): void;
  /** The probe of `member` failed: suspect it. */
  suspect(nowMs: number, member: Member): void;
  /** Every member held. */
  live(): Iterable<Member>;
  /** The members held whose address is proven (see `gate.ts`), in the order of `live()`. */
  proven(): readonly Member[];
  /** The members the operator named seeds, as held (few: read whole at every indirect probe). */
  seeds(): Iterable<Member>;
  /** Whether news of members waits to be piggybacked. */
  newsPending(): boolean;
  /** Whether a ping may go to `member` now (see `gate.ts`); if not, a helper probes it at once. */
  reachable(member: Member): boolean;
  /**
   * How fit `member` is to help: 0 if it has not shown it receives (it is
   * not asked), 2 for a seed (which met every joiner), 1 for the others.
   */
  helperRank(member: Member): number;
  /** Members proven (see `order.ts`). */
  provenCount(): number;
  /**
   * A suspect to probe out of turn, its suspicion running out within
   * `withinMs` (see `MemberTable.dueLook`), if any.
   */
  dueLook(nowMs: number, withinMs: number): Member | undefined;
}

/** What a helper's datagram is sent for: the request's bytes, and the target whose record rides first. */
export interface RelayedFor {
  readonly paidBytes: number;
  readonly target?: Address;
}

interface Probe {
  readonly target: Member;
  /** Whether it probes a suspect out of turn before its suspicion runs out (see `probeNext`). */
  readonly look: boolean;
  readonly seq: number;
  readonly indirectAtMs: number;
  readonly deadlineMs: number;
  /** Whether every helper has been asked (or there were none to ask). */
  indirect: boolean;
  /** The helpers asked so far. */
  readonly asked: Member[];
  helpers: number;
  nacks: number;
  /** Whether this node pinged the target itself, not only through helpers. */
  direct: boolean;
  /** Direct pings sent so far. */
  tries: number;
  /** When the first direct ping went. */
  sentAtMs: number;
  /** When the next direct ping goes if no ack came (Infinity: none). */
  nextTryMs: number;
  /** The wait before that one: doubled at each try. */
  gapMs: number;
}

interface Relay {
  readonly requester: Peer;
  readonly target: Address;
  readonly seq: number;
  readonly nackAtMs: number;
  /** Bytes of the request, which bound the ping, the ack and the nack it asks for. */
  readonly paidBytes: number;
}

/**
 * Direct pings a probe sends at most, the second direct try after asking
 * helpers included: those after the first wait a measured round trip, the
 * wait growing by half each time (`rtt.ts`), so they cost a datagram only
 * when one was lost. Under 30% loss a ping or its ack is lost half the
 * time: eight tries leave one probe in 200 unanswered, two left one in four.
 */
const MAX_DIRECT_TRIES = 8;
/** How much longer each retry waits than the one before. */
const BACKOFF = 1.5;

/** When a helper gives up on the target, as a fraction of the probe timeout. */
const NACK_AT = 0.8;

/**
 * Random picks from the round's members tried for each helper still wanted,
 * before the whole table is read: a fleet of a thousand read it at every
 * indirect probe, which was most of what a probe cost.
 */
const PICKS_PER_HELPER = 4;

/** One node's prober. */
export class Prober {
  readonly #config: MembershipConfig;
  readonly #prng: Prng;
  readonly #host: ProberHost;
  readonly #order: ProbeOrder;
  #probe: Probe | undefined;
  readonly #relays = new Map<number, Relay>();
  #awareness = 0;
  readonly #roundTrip: RoundTrip;

  /**
   * @param config The node's configuration.
   * @param prng The node's generator, sequence numbers included.
   * @param host The node.
   */
  constructor(config: MembershipConfig, prng: Prng, host: ProberHost) {
    this.#config = config;
    this.#prng = prng;
    this.#host = host;
    this.#roundTrip = new RoundTrip(config.protocolPeriodMs);
    this.#order = new ProbeOrder(prng, config.protocolPeriodMs, {
      live: () => host.live(),
      known: (member) => host.helperRank(member) !== 2 && host.reachable(member),
      provenCount: () => host.provenCount(),
    });
  }

  /** The smoothed round trip of this node's probes, once measured. */
  get roundTripMs(): number | undefined {
    return this.#roundTrip.meanMs;
  }

  /** Lifeguard's local health score, from 0 (healthy) to `maxAwareness`. */
  get awareness(): number {
    return this.#awareness;
  }

  /** Raises the score: this node missed something a healthy node would not have. */
  worse(delta: number): void {
    this.#awareness = Math.min(this.#config.maxAwareness, this.#awareness + delta);
  }

  /** A member to probe in this round: inserted at a random place among those still to come. */
  add(member: Member): void {
    this.#order.add(member);
  }

  /** A member is gone: a probe of it in flight is moot. */
  forget(member: Member): void {
    if (this.#probe?.target === member) this.#probe = undefined;
  }

  /** A random member of the current round, live or not, if any. */
  randomMember(): Member | undefined {
    return this.#order.random();
  }

  /** The earliest moment something of the prober is due, or Infinity. */
  nextDeadlineMs(): number {
    let next = Infinity;
    const probe = this.#probe;
    if (probe) {
      next = Math.min(probe.indirect ? probe.deadlineMs : probe.indirectAtMs, probe.nextTryMs);
    }
    // Relays are due in the order they came (each a fixed time after): the first is the earliest.
    for (const relay of this.#relays.values()) return Math.min(next, relay.nackAtMs);
    return next;
  }

  /**
   * Starts this period's probe of the next member in round-robin order.
   *
   * @param deadlineMs When the probe fails if still unanswered: the next period.
   */
  probeNext(nowMs: number, deadlineMs: number): void {
    // A suspect whose suspicion would run out before the next probe ends
    // goes first: the round-robin's turn comes a period later. Only where
    // a round of probes outlasts the least suspicion timeout: in a smaller
    // fleet the round-robin comes to every suspect in time, and looks in
    // its place cost the 3/2 split of five under Quorum a peak of 1.26 R.
    const members = this.#order.members.length;
    const roundMs = members * this.#config.protocolPeriodMs;
    const longRound = roundMs > suspicionBoundsMs(this.#config, members + 1).minMs;
    const look = longRound ? this.#host.dueLook(nowMs, 2 * (deadlineMs - nowMs)) : undefined;
    const target = look ?? this.#order.next(nowMs);
    if (!target) return;
    const seq = this.nextSeq();
    const timeoutMs = this.#config.probeTimeoutMs * (this.#awareness + 1);
    const indirectAtMs = nowMs + timeoutMs;
    const probe: Probe = {
      target,
      look: look !== undefined,
      seq,
      indirectAtMs,
      deadlineMs,
      indirect: false,
      asked: [],
      helpers: 0,
      nacks: 0,
      direct: false,
      tries: 0,
      sentAtMs: nowMs,
      nextTryMs: Infinity,
      gapMs: 0,
    };
    this.#probe = probe;
    // A member only heard of, that has sent nothing to pay for a ping, is
    // probed through a helper that knows it (a seed if there is one, which
    // met every joiner) in the place of the direct ping; the others only
    // if no ack came within the timeout, as after a direct ping. Asking
    // all at once cost a large fleet three times the datagrams while it
    // formed, when most probes are of members not yet proven, and most
    // helpers but the seeds have not proven the target either. While news
    // waits, all are asked at once: their requests are what carries it to
    // members at random before the pairs have proven each other.
    if (this.#host.reachable(target)) {
      this.#ping(nowMs, probe);
    } else {
      const first = this.#host.newsPending() ? this.#config.indirectProbes : 1;
      this.#askHelpers(nowMs, probe, first);
    }
  }

  /**
   * An ack arrived: it ends this node's probe, or is passed on to whom this node helps.
   *
   * @returns The target of the probe it ended, if it ended one.
   */
  acked(nowMs: number, seq: number): Member | undefined {
    const probe = this.#probe;
    if (probe?.seq === seq) {
      this.#probe = undefined;
      // Karn's rule: an ack after a retry may answer either ping.
      if (probe.tries === 1 && probe.helpers === 0) this.#roundTrip.sample(nowMs - probe.sentAtMs);
      this.#awareness = Math.max(0, this.#awareness - 1);
      return probe.target;
    }
    const relay = this.#relays.get(seq);
    if (!relay) return undefined;
    this.#relays.delete(seq);
    // The target's word of itself rides first: the target's ack just gave
    // it, and a requester probing a suspect it has not proven (through
    // helpers) may learn only so the refutation it missed.
    const { requester, paidBytes, target } = relay;
    this.#host.send(nowMs, requester.address, { type: "ack", seq: relay.seq }, {
      paidBytes,
      target,
    });
    return undefined;
  }

  /** A helper could not reach the target: so this node's own link is fine. */
  nacked(seq: number): void {
    if (this.#probe?.seq === seq) this.#probe.nacks++;
  }

  /**
   * Probes `target` for `requester`, who will hear an ack or, failing it, a
   * nack. The ping names a requester this node has proven: a target that
   * has not challenges it at once, so the two may prove each other without
   * waiting for their next probes, a round apart (under 30% loss at 200
   * nodes, most pairs had not 30 s after the start). One not proven is not
   * named: a forged request in a stranger's name would get the stranger
   * this node's answer and the target's challenge, twice what it took.
   */
  relay(
    nowMs: number,
    request: { requester: Peer; proven: boolean; seq: number; target: Address; paidBytes: number },
  ): void {
    // As many as there are members: each may have its probe running here at
    // once. A fleet's seed is every member's first helper, and when it
    // forms a thousand probes of members only heard of ask it at once; a
    // smaller bound had it drop them, and their askers suspect the living.
    if (this.#relays.size >= this.#config.maxMembers) return;
    const seq = this.nextSeq();
    // The requester gives up at the end of its period, a probe timeout after
    // asking: the nack must reach it before then to count, so it leaves early.
    const nackAtMs = nowMs + this.#config.probeTimeoutMs * NACK_AT;
    const { requester, target, paidBytes } = request;
    this.#relays.set(seq, { requester, target, seq: request.seq, nackAtMs, paidBytes });
    const named = request.proven && !requester.address.equals(target) ? { requester } : {};
    this.#host.send(nowMs, target, { type: "ping", seq, ...named }, { paidBytes });
  }

  /** Sends indirect probes, fails probes and sends nacks that are due. */
  handleTimeout(nowMs: number): void {
    const probe = this.#probe;
    if (probe && !probe.indirect && nowMs >= probe.indirectAtMs) {
      this.#askHelpers(nowMs, probe, this.#config.indirectProbes - probe.helpers);
      probe.indirect = true;
      // A second direct try, as memberlist's fallback: on a lossy link it
      // halves the probes that fail, at one datagram only when one went missing.
      if (this.#host.reachable(probe.target)) this.#ping(nowMs, probe);
    } else if (probe && nowMs >= probe.nextTryMs && nowMs < probe.deadlineMs) {
      // No ack within a few round trips: the ping or its ack was lost.
      this.#ping(nowMs, probe);
    }
    if (probe && nowMs >= probe.deadlineMs) {
      this.#probe = undefined;
      // Lifeguard: a helper's nack shows this node's link works; each missing
      // one, or a failure with nobody to ask, counts against this node. Only
      // for a probe whose target it pinged itself: one through helpers alone
      // (a member it has not proven) needs four datagrams where a ping needs
      // two, and under 30% loss failed half the time however healthy the
      // node, so in a large fleet, whose pairs are mostly unproven for a
      // round, every node's score rose to the top and its probes, and all
      // the news they carry, slowed ninefold. Its success still counts for
      // this node: the four datagrams came through.
      if (probe.direct) this.worse(probe.helpers > 0 ? probe.helpers - probe.nacks : 1);
      // A probe through helpers alone is weak evidence: four lossy hops a
      // helper. Unless every helper asked answered that it could not reach
      // the target either (their nacks), it suspects nobody: under 30% loss
      // such probes of members not yet proven were most of the suspicions
      // of a fleet of 200, and those proven probe the member directly.
      // A look that fails is no news: this node's suspicion runs out anyway
      // within a period or two, and a witness is a record to spread beside
      // the death that soon follows.
      const evidence = !probe.look &&
        (probe.direct || probe.helpers === 0 || probe.nacks >= probe.helpers);
      if (evidence) this.#host.suspect(nowMs, probe.target);
    }
    for (const [seq, relay] of this.#relays) {
      if (relay.nackAtMs > nowMs) break;
      this.#relays.delete(seq);
      // This node's record of the target rides first here too: it may know
      // of a refutation the requester missed, whether or not its ping came through.
      const { requester, paidBytes, target } = relay;
      this.#host.send(nowMs, requester.address, { type: "nack", seq: relay.seq }, {
        paidBytes,
        target,
      });
    }
  }

  /**
   * Pings `probe`'s target directly, and schedules the next try a measured
   * round trip later, longer than the wait before, while tries remain.
   */
  #ping(nowMs: number, probe: Probe): void {
    if (probe.tries === 0) probe.sentAtMs = nowMs;
    probe.direct = true;
    probe.tries++;
    // A look's ping carries the suspicion and no other news: its suspect
    // may well be cut off, and the news queue counts a transmission for
    // every datagram news rides on. In full, every try spent queued news on
    // it: cut 30 members into 20 and 10, the 10 (their health scores at 5 to
    // 8, and looks only theirs, 52 to 73 by seed) learned of each other's
    // suspicions and deaths so late that the last pair across the cut was
    // dead 34 to 46 s in on seeds 1 to 5; 18 to 29 s without looks, 20 to
    // 23 s with lean ones (tests/sim/reconnect_test.ts).
    if (probe.look) this.#host.look(nowMs, probe.target.address, probe.seq);
    else this.#host.send(nowMs, probe.target.address, { type: "ping", seq: probe.seq });
    const waitMs = this.#roundTrip.retryMs();
    probe.nextTryMs = Infinity;
    if (waitMs === undefined || probe.tries >= MAX_DIRECT_TRIES) return;
    probe.gapMs = probe.gapMs === 0 ? waitMs : BACKOFF * probe.gapMs;
    // The try at the indirect probe is one of them: none goes just before it.
    const nextMs = nowMs + probe.gapMs;
    if (probe.indirect || nextMs < probe.indirectAtMs) probe.nextTryMs = nextMs;
  }

  /** Asks up to `wanted` more helpers, seeds first, to probe `probe`'s target. */
  #askHelpers(nowMs: number, probe: Probe, wanted: number): void {
    const helpers = this.#pickHelpers(probe, wanted);
    probe.helpers += helpers.length;
    const target = { id: probe.target.id, address: probe.target.address };
    for (const helper of helpers) {
      probe.asked.push(helper);
      this.#host.send(nowMs, helper.address, { type: "pingReq", seq: probe.seq, target });
    }
  }

  /**
   * Up to `wanted` helpers not yet asked: the seeds first, in random order,
   * then proven members at random, drawn from the round without reading the
   * whole table unless the draws come up short (few members proven).
   */
  #pickHelpers(probe: Probe, wanted: number): Member[] {
    const picked: Member[] = [];
    if (wanted <= 0) return picked;
    const fit = (m: Member, rank: number) =>
      m.state === "alive" && m !== probe.target && !probe.asked.includes(m) &&
      !picked.includes(m) && this.#host.helperRank(m) === rank;
    const seeds = this.#prng.shuffle([...this.#host.seeds()].filter((m) => fit(m, 2)));
    picked.push(...seeds.slice(0, wanted));
    const order = this.#order.members;
    const tries = order.length === 0 ? 0 : PICKS_PER_HELPER * wanted;
    for (let t = 0; picked.length < wanted && t < tries; t++) {
      const m = order[this.#prng.below(order.length)];
      if (fit(m, 1)) picked.push(m);
    }
    if (picked.length < wanted) {
      // Only proven members rank 1: read those, not a fleet's whole table,
      // which while a thousand form is mostly members not yet proven.
      const rest = this.#host.proven().filter((m) => fit(m, 1));
      picked.push(...this.#prng.shuffle(rest).slice(0, wanted - picked.length));
    }
    return picked;
  }

  /**
   * A fresh sequence number, drawn at random rather than counted: an ack
   * carrying it back is what proves an address receives (see `gate.ts`), so
   * whoever saw one must not get the next by adding one. The generator is
   * not cryptographic; signing is what stops a determined forger.
   *
   * @param prng The stream to draw from: the node's, unless a rule of its
   *   own stream sends the ping (`reconnect.ts`).
   */
  nextSeq(prng: Prng = this.#prng): number {
    for (;;) {
      const seq = prng.nextU32();
      if (seq !== this.#probe?.seq && !this.#relays.has(seq)) return seq;
    }
  }
}
