/**
 * What `guard.stats()` tells: the counters of the request path, the view of
 * the fleet, and the background task's refusals, in one flat snapshot.
 *
 * @module
 */

import type { GossipAuthMode } from "../core/auth.ts";
import type { UnresolvedSeed } from "../core/membership/mod.ts";
import type { Enforcer } from "../core/enforcer.ts";
import type { FleetStats } from "../core/fleet_node.ts";
import type { GossipCounters } from "./gossip.ts";
import type { DeniedKey } from "./keystats.ts";
import { VERSION } from "../version.ts";

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

/**
 * Parts of datagrams a later version added, which this one does not know
 * and skips (a mixed fleet during a rolling upgrade): counted, so that a
 * skip is never silent.
 */
export interface WireSkipped {
  /** Sections of an unknown kind, skipped in datagrams otherwise taken. */
  readonly sections: number;
  /** Rules sections read up to a part of an unknown type, that part and the rest skipped. */
  readonly rulesParts: number;
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
  /** What a later version sends that this one skips. */
  readonly wireSkipped: WireSkipped;
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
 * Which of the fleet's rules this instance holds, and what sharing them did.
 * Two instances with the same `digest` hold the same rules.
 */
export interface FleetRulesStats {
  /** Whether this instance shares rule changes with the fleet (`fleetRules`). */
  readonly shared: boolean;
  /** Still learning the fleet's rules after a start: held at the floor meanwhile. */
  readonly learning: boolean;
  /** The newest change held: its version's clock reading (wall ms × 1024 + a counter); 0 for none. */
  readonly version: number;
  /** The digest of the rules held, 16 hex digits. */
  readonly digest: string;
  /**
   * Whether the digest has disagreed with a live peer's for longer than a
   * minute (`OUT_OF_STEP_MS`): not a change spreading, a fault. The
   * instance keeps pulling until they agree.
   */
  readonly outOfStep: boolean;
  /** How long the digest has disagreed with a live peer's, ms; 0 when it agrees with all. */
  readonly apartMs: number;
  /** Why it is out of step: its digest and a peer's that differs; `""` when in step. */
  readonly outOfStepReason: string;
  /** Rules held from the fleet. */
  readonly live: number;
  /** Removals held, until they expire (an hour). */
  readonly removed: number;
  /** Peers' changes applied here. */
  readonly applied: number;
  /** Peers' changes refused: too far ahead of this clock, older than a removal's lifetime, or beyond this book's bounds. */
  readonly refused: number;
  /** Rules sections, and entries within them, refused as malformed (a bad entry is skipped alone). */
  readonly malformed: number;
  /** Rules sections from senders that are no live member here. */
  readonly strangers: number;
  /** Page requests without this instance's ticket for their address that did not pay for an answer. */
  readonly unproven: number;
  /** Changes not kept for want of room. */
  readonly full: number;
  /** Changes made here too large to share. */
  readonly unshared: number;
  /** Entries held, rules and removals. */
  readonly entries: number;
  /** Entries held at most: those of origins that are no member take at most `bound - reserved`. */
  readonly bound: number;
  /** Of the bound, the entries kept for members' changes (strangers' cannot take them). */
  readonly reserved: number;
  /** Entries set on this instance (its own changes). */
  readonly own: number;
  /** Entries set on other members (or forged, with signing off). */
  readonly peers: number;
  /** Of `peers`, those whose origin was no live member as they came: departed members' or forged. */
  readonly strangerEntries: number;
  /**
   * Whether the table refused a rule for room since it last freed one: a
   * change made here that would not fit is refused with `RulesFull`.
   */
  readonly tableFull: boolean;
  /** Why the table is full, with its counts; `""` when it is not. */
  readonly tableFullReason: string;
  /** Transfers of a peer's whole table completed. */
  readonly transfers: number;
  /** Refusals so far, of every reason (malformed, stale, ahead of this clock, full): logged as it grows. */
  readonly refusals: number;
  /** Why the last refusal was, and from whom (`""`: none). */
  readonly lastRefusal: string;
}

/** One flat snapshot; a standalone guard is a fleet of one that needs no rounds. */
export function collectStats(s: StatsSources): Stats {
  const c = s.enforcer.counters;
  const f = s.fleet;
  return {
    guardVersion: VERSION,
    admitted: c.admitted,
    denied: c.denied,
    overflowed: c.overflowed,
    unknownClass: c.unknownClass,
    shadowDenied: c.shadowDenied,
    trackedKeys: s.enforcer.table.size,
    blockedKeys: s.enforcer.blockedKeys(s.nowMs),
    blocksEvicted: c.blocksEvicted,
    dryRun: s.enforcer.dryRun,
    running: s.running,
    clusterSize: f?.clusterSize ?? 1,
    countedSize: f?.countedSize ?? 1,
    suspects: f?.suspects ?? 0,
    joining: f?.joining ?? false,
    joinBlocked: f?.joinBlocked ?? "",
    unresolvedSeeds: f?.unresolvedSeeds ?? [],
    learning: f?.learning ?? false,
    withoutQuorum: f?.withoutQuorum ?? false,
    membersFull: f?.membersFull ?? false,
    hotKeys: f?.hotKeys ?? 0,
    sinceLastRoundMs: f?.sinceLastRoundMs ?? 0,
    cutRecords: f?.cutRecords ?? 0,
    identityConflicts: f?.identityConflicts ?? 0,
    membersRefused: f?.membersRefused ?? 0,
    withheldDatagrams: f?.withheldDatagrams ?? 0,
    withheldBytes: f?.withheldBytes ?? 0,
    gossipAuth: s.gossipAuth,
    rejectedDatagrams: {
      unsigned: s.gossip?.unsigned ?? 0,
      badTag: s.gossip?.badTag ?? 0,
      malformed: f?.malformed ?? 0,
      mismatchedRecords: f?.mismatchedRecords ?? 0,
    },
    wireSkipped: {
      sections: f?.skippedSections ?? 0,
      rulesParts: f?.rulesSkippedParts ?? 0,
    },
    rules: {
      shared: f?.fleetRules ?? false,
      learning: f?.rulesLearning ?? false,
      version: f?.rulesVersion ?? 0,
      digest: f?.rulesDigest ?? "0000000000000000",
      outOfStep: f?.rulesOutOfStep ?? false,
      apartMs: f?.rulesApartMs ?? 0,
      outOfStepReason: f?.rulesOutOfStepReason ?? "",
      live: f?.rulesLive ?? 0,
      removed: f?.rulesRemoved ?? 0,
      applied: f?.rulesApplied ?? 0,
      refused: f?.rulesRefused ?? 0,
      malformed: f?.rulesMalformed ?? 0,
      strangers: f?.rulesStrangers ?? 0,
      unproven: f?.rulesUnproven ?? 0,
      full: f?.rulesFull ?? 0,
      unshared: f?.rulesUnshared ?? 0,
      entries: f?.rulesEntries ?? 0,
      bound: f?.rulesBound ?? 0,
      reserved: f?.rulesReserved ?? 0,
      own: f?.rulesOwn ?? 0,
      peers: f?.rulesPeers ?? 0,
      strangerEntries: f?.rulesStrangerEntries ?? 0,
      tableFull: f?.rulesTableFull ?? false,
      tableFullReason: f?.rulesTableFullReason ?? "",
      transfers: f?.rulesTransfers ?? 0,
      refusals: f?.rulesRefusals ?? 0,
      lastRefusal: f?.rulesLastRefusal ?? "",
    },
    mostDenied: s.most.mostDenied,
    mostShadowDenied: s.most.mostShadowDenied,
  };
}
