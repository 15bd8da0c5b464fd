/**
 * What a member knows of a peer's rules, from the last rules section it
 * heard from it, and when that is reason to pull the peer's table.
 *
 * A digest heard is a snapshot: a peer heard while it was itself pulling a
 * bulk change said what it held then, and holds more by now. In a fleet of
 * fifty a member hears a given peer about once every 25 periods, so acting
 * on the last digest heard, however old, made members that already agreed
 * pull whole tables from peers they had last heard partway. A disagreement
 * is therefore reason to pull only while it is fresh: the peer was heard
 * differing lately, and either said it is ahead or was heard differing at
 * least five periods earlier too; and the digest it was heard with still
 * differs from this member's now.
 *
 * @module
 */

import type { Address } from "../../proto/mod.ts";
import type { Digest, RulesSection } from "./wire.ts";
import type { Origin } from "./entry.ts";

/** A peer, as rule sharing sees it. */
export interface PeerState {
  readonly address: Address;
  /** Whether it ever sent a rules section: a member of an earlier release, or without fleet rules, never does. */
  speaks: boolean;
  learning: boolean;
  /** Its digest, as last heard. */
  digest: Digest;
  /** When it was last heard. */
  heardAtMs: number;
  /** When it was first heard differing, since it last agreed (or either was learning). */
  disagreeSinceMs: number | undefined;
  /** Whether it said it is ahead while it differed: pull from it without waiting. */
  ahead: boolean;
  /** When a transfer from it last gave up, if one did. */
  failedAtMs?: number;
}

/** Whether two digests are the same: the tables hold the same live rules. */
export function sameDigest(a: Digest, b: Digest): boolean {
  return a.live === b.live && a.hi === b.hi && a.lo === b.lo;
}

/** A live member not yet heard. */
export function unheard(address: Address): PeerState {
  return {
    address,
    speaks: false,
    learning: true,
    digest: { live: 0, hi: 0, lo: 0 },
    heardAtMs: -Infinity,
    disagreeSinceMs: undefined,
    ahead: false,
  };
}

/**
 * Takes what a rules section from `peer` says of it, against `mine` (the
 * digest after merging what the section brought).
 *
 * @param learning Whether this member is still learning (its digest says nothing yet).
 */
export function hear(
  peer: PeerState,
  nowMs: number,
  section: RulesSection,
  mine: Digest,
  learning: boolean,
): void {
  peer.speaks = true;
  peer.learning = section.learning;
  peer.digest = section.digest;
  peer.heardAtMs = nowMs;
  if (sameDigest(mine, section.digest) || section.learning || learning) {
    peer.disagreeSinceMs = undefined;
  } else peer.disagreeSinceMs ??= nowMs;
  peer.ahead = section.ahead && peer.disagreeSinceMs !== undefined;
}

/**
 * Whether `peer` differs from `mine` by fresh evidence, enough to pull its
 * table (see the module doc).
 *
 * @param windowMs Five periods: how lately it must have been heard, and how long a disagreement without the ahead flag must have lasted.
 */
export function differs(peer: PeerState, nowMs: number, mine: Digest, windowMs: number): boolean {
  const since = peer.disagreeSinceMs;
  if (since === undefined || sameDigest(peer.digest, mine)) return false;
  if (nowMs - peer.heardAtMs > windowMs) return false;
  return peer.ahead || peer.heardAtMs - since >= windowMs;
}

/**
 * Whether `self`'s member ID is below that of every peer that has spoken
 * rules: among learners only, the one that goes first (`transfer.ts`).
 */
export function lowestHeard(self: Origin, peers: Iterable<PeerState>): boolean {
  for (const peer of peers) {
    if (!peer.speaks) continue;
    const id = peer.address.id;
    if (id.hi < self.hi || (id.hi === self.hi && id.lo < self.lo)) return false;
  }
  return true;
}
