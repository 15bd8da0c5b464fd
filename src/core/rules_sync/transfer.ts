/**
 * When a member pulls a peer's whole table, and from whom: the newcomer's
 * transfer, which holds it learning until it ends, and the background
 * transfer from a peer whose digest lasts apart, with its back-off. One
 * transfer at a time; its pages and retries are `pull.ts`'s, the pages'
 * answering `serve.ts`'s, the design `mod.ts`'s ("Transfer").
 *
 * Learning ends on a peer that knows the fleet's rules, one that is not
 * learning itself: a learner's table is as empty as this one. With none
 * (alone, among members that share no rules in a rollout, or among
 * learners only, as when the whole fleet restarts), past the time a probe
 * round takes to hear one, there is nobody who knows more; among learners
 * only, the lowest ID heard goes first.
 *
 * @module
 */

import { type Origin, TOMBSTONE_MS } from "./entry.ts";
import { differs, lowestHeard, type PeerState, sameDigest } from "./peer.ts";
import { Pull } from "./pull.ts";
import type { RulesSend } from "./serve.ts";
import {
  type Digest,
  NO_TICKET,
  PULL_BYTES,
  RULES_DATAGRAM_BYTES,
  RULES_HEADER_BYTES,
  SectionWriter,
} from "./wire.ts";

/** Protocol periods two members disagree before one pulls the other's table. */
export const DISAGREE_PERIODS = 5;
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

/** What the transfers of one member read and where their requests go. */
export interface TransferOptions {
  /** This member's ID: among learners only, the lowest goes first. */
  readonly self: Origin;
  /** The protocol period, ms: timers count in it. */
  readonly protocolPeriodMs: number;
  /** The live peers, by address: the rule sharing's own, read here. */
  readonly peers: ReadonlyMap<string, PeerState>;
  /** This member's digest now. */
  readonly digest: () => Digest;
  /** Where a page request goes out. */
  readonly send: (send: RulesSend) => void;
}

/** See the module doc. */
export class Transfers {
  readonly #options: TransferOptions;
  #learning: boolean;
  #pull: Pull | undefined;
  #nextBackgroundMs = 0;
  #joinedAtMs: number | undefined;
  #backoffPeriods = BACKOFF_PERIODS;
  #completed = 0;

  /**
   * @param options Who this member is, its peers and where requests go.
   * @param learning Whether it starts learning: it has seeds, so a fleet to learn from.
   */
  constructor(options: TransferOptions, learning: boolean) {
    this.#options = options;
    this.#learning = learning;
  }

  /** Whether this member is still learning the fleet's rules. */
  get learning(): boolean {
    return this.#learning;
  }

  /** Transfers of a peer's whole table completed. */
  get completed(): number {
    return this.#completed;
  }

  /** The transfer under way from the peer at `key` (an address's text), if there is one. */
  from(key: string): Pull | undefined {
    return this.#pull?.peer.toString() === key ? this.#pull : undefined;
  }

  /** The peer at `key` is no live member now: a transfer from it ends. */
  memberGone(key: string): void {
    if (this.#pull?.peer.toString() === key) this.#pull = undefined;
  }

  /**
   * A rules section from `peer` was taken (its page, if it brought one,
   * merged and handed to the transfer from it): the transfer ends once it
   * is done, or, in the background, once the tables agree, wherever it is
   * in the peer's table; else the next request goes as soon as the last
   * was answered.
   *
   * @param paged Whether the section brought a page.
   */
  heard(nowMs: number, peer: PeerState, paged: boolean): void {
    const pull = this.from(peer.address.toString());
    if (
      pull && (pull.done || (!pull.learning && sameDigest(peer.digest, this.#options.digest())))
    ) {
      this.#finish(nowMs, pull);
    } else if (paged && pull?.answered) this.#ask(nowMs, pull);
  }

  /**
   * The learning half of a tick: a transfer that failed gives way; a
   * newcomer stops learning (see the module doc) or starts its transfer.
   *
   * @param joining Whether membership is still joining (no peer reached yet).
   */
  learn(nowMs: number, joining: boolean): void {
    const { peers, protocolPeriodMs: periodMs } = this.#options;
    if (this.#pull?.failed) {
      // Its answers are not reaching here (withheld until this address is
      // proven there, say): the next transfer tries another peer first.
      const peer = peers.get(this.#pull.peer.toString());
      if (peer) peer.failedAtMs = nowMs;
      this.#pull = undefined;
    }
    if (joining) this.#joinedAtMs = undefined;
    else this.#joinedAtMs ??= nowMs;
    const joinedMs = nowMs - (this.#joinedAtMs ?? nowMs);
    const none = !this.#pickPeer(knowing);
    const alone = none && joinedMs >= SILENT_PERIODS * periodMs;
    // Among learners only, one must go first: the lowest ID heard, once a
    // probe round has had time to bring in a member that knows more.
    const first = none && joinedMs >= LEARNERS_PERIODS * periodMs &&
      lowestHeard(this.#options.self, peers.values());
    if (this.#learning && !joining && (peers.size === 0 || alone || first)) {
      this.#learning = false;
    }
    if (!this.#pull && this.#learning) {
      const peer = this.#pickPeer(knowing);
      if (peer) this.#pull = new Pull(peer.address, true);
    }
  }

  /**
   * This member agrees with every live peer: the next disagreement is a
   * new one, pulled after five periods again, with no back-off.
   */
  agreed(): void {
    this.#backoffPeriods = BACKOFF_PERIODS;
  }

  /**
   * The background half of a tick: a background transfer ends when gossip
   * has brought the rest; past the back-off, one starts from the peer
   * differing by fresh evidence that holds the most rules (after a bulk
   * change, likely the one that made it); and a request is asked again
   * when it is due.
   *
   * @param mine This member's digest.
   */
  pull(nowMs: number, mine: Digest): void {
    const { peers, protocolPeriodMs } = this.#options;
    if (this.#pull && !this.#pull.learning) {
      const peer = peers.get(this.#pull.peer.toString());
      if (peer && sameDigest(peer.digest, mine)) this.#finish(nowMs, this.#pull);
    }
    if (!this.#pull && !this.#learning && nowMs >= this.#nextBackgroundMs) {
      const window = DISAGREE_PERIODS * protocolPeriodMs;
      let peer: PeerState | undefined;
      for (const p of peers.values()) {
        if (differs(p, nowMs, mine, window) && (!peer || p.digest.live > peer.digest.live)) {
          peer = p;
        }
      }
      if (peer) this.#pull = new Pull(peer.address, false);
    }
    if (this.#pull) this.#ask(nowMs, this.#pull);
  }

  /** The peer that fits whose last transfer failed longest ago (or never did). */
  #pickPeer(fits: (peer: PeerState) => boolean): PeerState | undefined {
    let best: PeerState | undefined;
    for (const peer of this.#options.peers.values()) {
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
      this.#options.digest(),
    );
    writer.pull(from, pull.ticket);
    if (!ticketed) writer.pad();
    this.#options.send({ to: pull.peer, bytes: writer.finish(), bare: false });
  }

  #finish(nowMs: number, pull: Pull): void {
    const periodMs = this.#options.protocolPeriodMs;
    this.#pull = undefined;
    this.#completed++;
    const peer = this.#options.peers.get(pull.peer.toString());
    if (pull.learning) {
      // A peer that restarted meanwhile, learning now, taught nothing: ask another.
      if (peer && !peer.learning) this.#learning = false;
      return;
    }
    const stillApart = peer !== undefined && !sameDigest(peer.digest, this.#options.digest());
    this.#backoffPeriods = stillApart
      ? Math.min(this.#backoffPeriods * 2, TOMBSTONE_MS / 4 / periodMs)
      : BACKOFF_PERIODS;
    if (peer) peer.disagreeSinceMs = undefined;
    this.#nextBackgroundMs = nowMs + this.#backoffPeriods * periodMs;
  }
}

/** A peer that knows the fleet's rules: it speaks them and is not learning them itself. */
function knowing(peer: PeerState): boolean {
  return peer.speaks && !peer.learning;
}
