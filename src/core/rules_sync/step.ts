/**
 * Whether a member is in step with its fleet's rules, and why not. A
 * disagreement of digests is normal for the seconds a change takes to
 * spread; one that outlasts {@link OUT_OF_STEP_MS} is not (a rule refused
 * for good, a transfer that never ends), and the member says so: in
 * `stats()`, the metrics, the dashboard and the sidecar's `/readyz`, with
 * the digests that differ, while it keeps pulling until they agree.
 *
 * @module
 */

import type { Digest } from "./wire.ts";
import { type PeerState, sameDigest } from "./peer.ts";

/**
 * How long a member's digest may disagree with a live peer's before it is
 * out of step: also the bound within which a fleet's members agree once
 * faults end (docs/fleet-rules.md; the swarm in
 * `tests/sim/rules_swarm_test.ts` holds every seed to it).
 */
export const OUT_OF_STEP_MS = 60_000;

/** How lately a peer must have been heard for its digest to count. */
const HEARD_WITHIN_MS = 10_000;

/** The hex form of a digest, as `stats()` shows it. */
export function digestHex(d: Digest): string {
  const hex = (n: number) => n.toString(16).padStart(8, "0");
  return hex(d.hi) + hex(d.lo);
}

/** See the module doc. */
export class StepWatch {
  #apartSinceMs: number | undefined;
  #peer: PeerState | undefined;
  #apartPeers = 0;
  #heardPeers = 0;

  /**
   * Takes stock at `nowMs`: whether `mine` differs from the digest of a
   * live peer heard lately that is not learning.
   *
   * @param learning Whether this member is still learning (its own state, reported apart).
   * @returns Whether this member agrees with every such peer.
   */
  update(nowMs: number, peers: Iterable<PeerState>, mine: Digest, learning: boolean): boolean {
    let apart: PeerState | undefined;
    let apartPeers = 0, heardPeers = 0;
    for (const peer of peers) {
      if (!peer.speaks || peer.learning || nowMs - peer.heardAtMs > HEARD_WITHIN_MS) continue;
      heardPeers++;
      if (sameDigest(peer.digest, mine)) continue;
      apartPeers++;
      apart ??= peer;
    }
    [this.#apartPeers, this.#heardPeers] = [apartPeers, heardPeers];
    if (learning || apart === undefined) {
      this.#apartSinceMs = undefined;
      this.#peer = undefined;
      return true;
    }
    this.#apartSinceMs ??= nowMs;
    this.#peer = apart;
    return false;
  }

  /** How long the digests have disagreed, ms (0: they agree). */
  apartMs(nowMs: number): number {
    return this.#apartSinceMs === undefined ? 0 : nowMs - this.#apartSinceMs;
  }

  /** Whether they have disagreed for longer than {@link OUT_OF_STEP_MS}. */
  outOfStep(nowMs: number): boolean {
    return this.apartMs(nowMs) > OUT_OF_STEP_MS;
  }

  /** Why this member is out of step, in words; `""` when it is not. */
  reason(nowMs: number, mine: Digest): string {
    const peer = this.#peer;
    if (!this.outOfStep(nowMs) || peer === undefined) return "";
    const s = Math.floor(this.apartMs(nowMs) / 1_000);
    return `rules digest ${digestHex(mine)} (${mine.live} rules) has differed for ${s} s from ` +
      `${this.#apartPeers} of ${this.#heardPeers} live peers', ${peer.address}'s ` +
      `${digestHex(peer.digest)} (${peer.digest.live} rules) among them`;
  }
}
