/**
 * What `guard.stats()` tells: the counters of the request path, the view of
 * the fleet, and the background task's refusals, in one flat snapshot.
 *
 * @module
 */

import type { GossipAuthMode } from "../core/auth.ts";
import type { UnresolvedSeed } from "../core/membership/mod.ts";
import type { Enforcer, EnforcerStats } from "../core/enforcer.ts";
import type { FleetStats } from "../core/fleet_node.ts";
import { type FleetRulesStats, NO_RULES } from "../core/rules_sync/mod.ts";
import type { GossipCounters } from "./gossip.ts";
import type { DeniedKey } from "./keystats.ts";
import { VERSION } from "../version.ts";

export type { FleetRulesStats } from "../core/rules_sync/mod.ts";

/** Datagrams refused, by reason. */
export interface RejectedDatagrams {
  /** Unsigned, under Required: a peer not signing yet, or a stranger. */
  readonly unsigned: number;
  /** A tag none of this node's secrets made: secrets that do not match the peers'. */
  readonly badTag: number;
  /** No message, or a sender under an ID its address does not give. */
  readonly malformed: number;
  /** Not datagrams: records after the sender's under an ID their address does not give, dropped alone. */
  readonly mismatchedRecords: number;
}

/** What one instance decided, and how it is set up. */
export interface Stats {
  /**
   * The rateguard release this instance runs, as `rateguard --version`
   * says it (`0.2.0`): which build a fleet mixes during a rollout. Not
   * `rules.version`, the clock of the newest fleet rule.
   */
  readonly guardVersion: string;
  /** Checks admitted since the guard started. */
  readonly admitted: number;
  /** Checks denied; in a dry run, those that would have been. */
  readonly denied: number;
  /** Checks of keys with no place in the key table (raise `trackedKeys` if it grows). */
  readonly overflowed: number;
  /** Checks in a class this instance does not know, held to the default limit. */
  readonly unknownClass: number;
  /** Checks a shadow limit would have denied. */
  readonly shadowDenied: number;
  /** Keys holding state now. */
  readonly trackedKeys: number;
  /** Keys blocked now (`block`), at most `maxBlocks`: none holds a place among `trackedKeys` but a hot key's. */
  readonly blockedKeys: number;
  /** Blocks ended early to make room for a new one when `maxBlocks` keys were blocked. */
  readonly blocksEvicted: number;
  /** Whether every check is admitted and would-be denials only counted. */
  readonly dryRun: boolean;
  /** Whether the guard runs (false once it has left). */
  readonly running: boolean;
  /** Members seen, this instance included: 1 for a standalone guard. */
  readonly clusterSize: number;
  /** N, the members the limit is shared over: 1 for a standalone guard. */
  readonly countedSize: number;
  /** Members not heard from lately. */
  readonly suspects: number;
  /** Configured with seeds, and no peer reached yet: every key held at the floor. */
  readonly joining: boolean;
  /**
   * Why it is joining, in one line: the seed names that have not resolved
   * and the addresses that have not answered; empty when not joining.
   */
  readonly joinBlocked: string;
  /** Seed names that give no address now: never answered, answered empty, or failing. */
  readonly unresolvedSeeds: readonly UnresolvedSeed[];
  /** Peers have not yet heard this instance's demand: every key held at the floor. */
  readonly learning: boolean;
  /** Under Quorum, no majority in sight: every key held at the floor. */
  readonly withoutQuorum: boolean;
  /** A newcomer was refused for a full member table lately: every key held at the floor. */
  readonly membersFull: boolean;
  /** Keys coordinated with the peers. */
  readonly hotKeys: number;
  /** Milliseconds since the last gossip round; far over the protocol period, the background task is stuck. */
  readonly sinceLastRoundMs: number;
  /** Records of hot keys left out of this instance's demand reports for want of room, summed over reports. */
  readonly cutRecords: number;
  /** Times this instance outbid an alive record of itself it did not make. */
  readonly identityConflicts: number;
  /** News of newcomers refused because the member table was full. */
  readonly membersRefused: number;
  /**
   * Suspects probed out of turn, as their suspicion, confirmed by no other
   * member, was about to run out: each a chance this instance missed a refutation.
   */
  readonly suspectLooks: number;
  /**
   * Stale suspicions and deaths whose sender this instance told the
   * member's newer record: each a peer that missed a refutation.
   */
  readonly corrections: number;
  /**
   * Datagrams not sent to an address that has not shown it receives there,
   * for want of bytes received in its name: a stranger named by a forger;
   * and pages larger than the join that asked for them, whoever it named.
   */
  readonly withheldDatagrams: number;
  /** Bytes of those datagrams. */
  readonly withheldBytes: number;
  /** How this instance signs its gossip. */
  readonly gossipAuth: GossipAuthMode;
  /** Datagrams (and records) refused, by reason. */
  readonly rejectedDatagrams: RejectedDatagrams;
  /**
   * Sections of a kind this version does not know (a later version's, in a
   * mixed fleet during a rolling upgrade), skipped in datagrams otherwise
   * taken: counted, so that a skip is never silent. A later version's rules
   * parts are counted in `rules.skippedParts`.
   */
  readonly skippedSections: number;
  /** The fleet's rules as this instance holds them (see `fleetRules`). */
  readonly rules: FleetRulesStats;
  /** The keys denied most lately, with their rates over the last ten seconds or so. */
  readonly mostDenied: readonly DeniedKey[];
  /** The keys a shadow limit would deny most, likewise. */
  readonly mostShadowDenied: readonly DeniedKey[];
}

/** What a snapshot is made of. */
export interface StatsSources {
  /** The time, ms on the guard's clock. */
  readonly nowMs: number;
  /** The request path. */
  readonly enforcer: Enforcer;
  /** The fleet node's view, for a guard in a fleet. */
  readonly fleet?: FleetStats;
  /** The background task's counters, for a guard in a fleet. */
  readonly gossip?: GossipCounters;
  /** Whether the guard runs. */
  readonly running: boolean;
  /** How it signs. */
  readonly gossipAuth: GossipAuthMode;
  /** The per-key lists. */
  readonly most: { readonly mostDenied: DeniedKey[]; readonly mostShadowDenied: DeniedKey[] };
}

/**
 * A standalone guard's fleet figures: a fleet of one that needs no rounds,
 * joins no one and shares no rules.
 */
const ALONE: Omit<FleetStats, keyof EnforcerStats> = {
  clusterSize: 1,
  countedSize: 1,
  suspects: 0,
  tombstones: 0,
  incarnation: 0,
  awareness: 0,
  joining: false,
  joinBlocked: "",
  unresolvedSeeds: [],
  learning: false,
  withoutQuorum: false,
  held: false,
  membersFull: false,
  membersRefused: 0,
  identityConflicts: 0,
  suspectLooks: 0,
  corrections: 0,
  mismatchedRecords: 0,
  malformed: 0,
  skippedSections: 0,
  left: false,
  hotKeys: 0,
  sinceLastRoundMs: 0,
  cutRecords: 0,
  withheldDatagrams: 0,
  withheldBytes: 0,
  rules: NO_RULES,
};

/**
 * One flat snapshot, composed of its sources' figures under their own names
 * (the fleet node's, or a standalone guard's enforcer beside {@link ALONE}):
 * only the datagrams refused are gathered under one field, and the node's
 * own workings (its incarnation, awareness, tombstones, whether it left or
 * holds keys at the floor) left out.
 */
export function collectStats(s: StatsSources): Stats {
  const {
    malformed,
    mismatchedRecords,
    tombstones: _tombstones,
    incarnation: _incarnation,
    awareness: _awareness,
    left: _left,
    held: _held,
    ...figures
  } = s.fleet ?? { ...s.enforcer.stats(s.nowMs), ...ALONE };
  return {
    guardVersion: VERSION,
    ...figures,
    running: s.running,
    gossipAuth: s.gossipAuth,
    rejectedDatagrams: {
      unsigned: s.gossip?.unsigned ?? 0,
      badTag: s.gossip?.badTag ?? 0,
      malformed,
      mismatchedRecords,
    },
    mostDenied: s.most.mostDenied,
    mostShadowDenied: s.most.mostShadowDenied,
  };
}
