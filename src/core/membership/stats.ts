/**
 * What a node tells of itself for `guard.stats()`, the metrics and
 * `/readyz`: what it knows of the cluster, whether it is joining and why,
 * and what it has refused or withheld, each a counter of its own.
 *
 * @module
 */

import type { UnresolvedSeed } from "./seeds.ts";

/** What a node knows of the cluster and what it has refused, for `guard.stats()`. */
export interface MembershipStats {
  /** Members seen alive or suspect, this node included. */
  readonly clusterSize: number;
  /** Members suspected and not yet refuted or dead. */
  readonly suspects: number;
  /** Dead and departed members still remembered (tombstones). */
  readonly tombstones: number;
  /** This node's incarnation. */
  readonly incarnation: number;
  /** Lifeguard's local health score: 0 is healthy; probes slow down by (score + 1). */
  readonly awareness: number;
  /** Configured with seeds that may name a peer, and no live member reached yet. */
  readonly joining: boolean;
  /**
   * Why it is joining, as the sidecar's `/readyz` and log tell it
   * ("joining: seed rateguard.svc:7946 has not resolved (5 lookups failed)");
   * empty when not joining.
   */
  readonly joinBlocked: string;
  /** Seed names that give no address now (never answered, answered empty, or failing). */
  readonly unresolvedSeeds: readonly UnresolvedSeed[];
  /** A newcomer was refused for a full table in the last `tombstoneMs`. */
  readonly membersFull: boolean;
  /** News of newcomers refused because the member table was full. */
  readonly membersRefused: number;
  /** Times this node outbid an alive record of itself that it did not make. */
  readonly identityConflicts: number;
  /**
   * Suspects probed out of turn, their unconfirmed suspicion about to run
   * out: each a chance that this node missed a refutation.
   */
  readonly suspectLooks: number;
  /**
   * Stale suspicions and deaths whose sender this node told the member's
   * newer record: each a node that missed a refutation.
   */
  readonly corrections: number;
  /** Records dropped because their ID is not their address's. */
  readonly mismatchedRecords: number;
  /** Datagrams refused: undecodable, or a sender whose ID is not its address's. */
  readonly malformed: number;
  /** Sections of kinds this version does not know (a later version's), skipped in datagrams taken. */
  readonly skippedSections: number;
  /** Whether `leave()` was called. */
  readonly left: boolean;
  /**
   * Datagrams not sent to an address that has not shown it receives there,
   * as they would have exceeded the bytes received in its name; pages not
   * sent to any address, as they exceeded the join that asked for them;
   * and probes not made for a request to probe its own sender.
   */
  readonly withheldDatagrams: number;
  /** Bytes of those datagrams, at the least each could have taken. */
  readonly withheldBytes: number;
}
