/**
 * The metrics of a guard, defined once: their names (`rateguard_*`), kinds,
 * help texts, and how each is read off a `stats()` snapshot. Both the
 * OpenTelemetry instruments and the Prometheus text are made from this
 * table, so the two can never disagree.
 *
 * @module
 */

import type { Stats } from "../runtime/stats.ts";

/** Labels of one series. */
export type Labels = Readonly<Record<string, string>>;

/** One metric: a name, a kind, and its series in a snapshot. */
export interface MetricDefinition {
  /** The name, `rateguard_*`. */
  readonly name: string;
  /** A counter only grows; a gauge goes up and down. */
  readonly kind: "counter" | "gauge";
  /** What it tells. */
  readonly help: string;
  /** Its series: labels (besides `guard`) and a value. */
  readonly series: (s: Stats) => ReadonlyArray<readonly [Labels, number]>;
}

const one = (
  value: number | boolean,
): ReadonlyArray<readonly [Labels, number]> => [[{}, Number(value)]];

/**
 * Everything in `stats()` but the per-key lists, whose key hashes as labels
 * would make a series per key.
 */
export const METRICS: readonly MetricDefinition[] = [
  {
    name: "rateguard_checks_total",
    kind: "counter",
    help: "Checks decided, by decision (in a dry run, deny counts would-be denials).",
    series: (s) => [[{ decision: "allow" }, s.admitted], [{ decision: "deny" }, s.denied]],
  },
  {
    name: "rateguard_overflowed_total",
    kind: "counter",
    help: "Checks of keys with no place in the key table: raise trackedKeys if it grows.",
    series: (s) => one(s.overflowed),
  },
  {
    name: "rateguard_unknown_class_total",
    kind: "counter",
    help: "Checks in a class this instance does not know, held to the default limit.",
    series: (s) => one(s.unknownClass),
  },
  {
    name: "rateguard_shadow_denied_total",
    kind: "counter",
    help: "Checks a shadow limit would have denied.",
    series: (s) => one(s.shadowDenied),
  },
  {
    name: "rateguard_identity_conflicts_total",
    kind: "counter",
    help: "Times this instance outbid an alive record of itself it did not make.",
    series: (s) => one(s.identityConflicts),
  },
  {
    name: "rateguard_suspect_looks_total",
    kind: "counter",
    help:
      "Suspects probed out of turn as a suspicion no other member confirmed was about to run out.",
    series: (s) => one(s.suspectLooks),
  },
  {
    name: "rateguard_corrections_total",
    kind: "counter",
    help: "Stale suspicions and deaths whose sender was told the member's newer record.",
    series: (s) => one(s.corrections),
  },
  {
    name: "rateguard_members_refused_total",
    kind: "counter",
    help: "News of newcomers refused for a full member table.",
    series: (s) => one(s.membersRefused),
  },
  {
    name: "rateguard_withheld_datagrams_total",
    kind: "counter",
    help:
      "Datagrams withheld so that no address, member or seed, receives more than its bound per byte sent in its name.",
    series: (s) => one(s.withheldDatagrams),
  },
  {
    name: "rateguard_withheld_bytes_total",
    kind: "counter",
    help: "Bytes of the datagrams withheld by that bound (see rateguard_withheld_datagrams_total).",
    series: (s) => one(s.withheldBytes),
  },
  {
    name: "rateguard_rejected_datagrams_total",
    kind: "counter",
    help: "Datagrams refused, by reason (mismatched_records counts records dropped alone).",
    series: (s) => [
      [{ reason: "unsigned" }, s.rejectedDatagrams.unsigned],
      [{ reason: "bad_tag" }, s.rejectedDatagrams.badTag],
      [{ reason: "malformed" }, s.rejectedDatagrams.malformed],
      [{ reason: "mismatched_records" }, s.rejectedDatagrams.mismatchedRecords],
    ],
  },
  {
    name: "rateguard_wire_skipped_total",
    kind: "counter",
    help:
      "Parts of datagrams of a later version that this one does not know, skipped: sections of an unknown kind, and rules sections cut at a part of an unknown type.",
    series: (s) => [
      [{ part: "section" }, s.skippedSections],
      [{ part: "rules_part" }, s.rules.skippedParts],
    ],
  },
  {
    name: "rateguard_rules_refused_total",
    kind: "counter",
    help: "Fleet rule changes and sections not taken, by reason (see docs/fleet-rules.md).",
    series: (s) => [
      [{ reason: "refused" }, s.rules.refused],
      [{ reason: "malformed" }, s.rules.malformed],
      [{ reason: "strangers" }, s.rules.strangers],
      [{ reason: "unproven" }, s.rules.unproven],
      [{ reason: "full" }, s.rules.full],
      [{ reason: "unshared" }, s.rules.unshared],
    ],
  },
  {
    name: "rateguard_rules",
    kind: "gauge",
    help: "Fleet rules held: live rules, and removals kept until they expire.",
    series: (s) => [[{ state: "live" }, s.rules.live], [{ state: "removed" }, s.rules.removed]],
  },
  {
    name: "rateguard_rules_entries",
    kind: "gauge",
    help:
      "Fleet rules table entries by whose they are (own: set on this instance; peers: the rest; strangers: of peers, those whose origin was no live member), its bound, and the entries kept for members' changes (strangers' take at most bound - reserved).",
    series: (s) => [
      [{ of: "own" }, s.rules.own],
      [{ of: "peers" }, s.rules.peers],
      [{ of: "strangers" }, s.rules.strangerEntries],
      [{ of: "bound" }, s.rules.bound],
      [{ of: "reserved" }, s.rules.reserved],
    ],
  },
  {
    name: "rateguard_rules_table_full",
    kind: "gauge",
    help:
      "1 while the fleet rules table has refused a rule for room (since it last freed an entry): changes made here that would not fit are refused (RulesFull), else 0.",
    series: (s) => one(s.rules.tableFull),
  },
  {
    name: "rateguard_rules_out_of_step",
    kind: "gauge",
    help:
      "1 while this instance's fleet rules digest has differed from a live peer's for over a minute (see docs/fleet-rules.md), else 0.",
    series: (s) => one(s.rules.outOfStep),
  },
  {
    name: "rateguard_rules_apart_ms",
    kind: "gauge",
    help:
      "How long this instance's fleet rules digest has differed from a live peer's; 0 when it agrees.",
    series: (s) => one(s.rules.apartMs),
  },
  {
    name: "rateguard_cluster_size",
    kind: "gauge",
    help: "Members seen, this instance included.",
    series: (s) => one(s.clusterSize),
  },
  {
    name: "rateguard_counted_size",
    kind: "gauge",
    help: "N, the members the limit is shared over.",
    series: (s) => one(s.countedSize),
  },
  {
    name: "rateguard_suspects",
    kind: "gauge",
    help: "Members not heard from lately.",
    series: (s) => one(s.suspects),
  },
  {
    name: "rateguard_tracked_keys",
    kind: "gauge",
    help: "Keys with state on this instance.",
    series: (s) => one(s.trackedKeys),
  },
  {
    name: "rateguard_blocked_keys",
    kind: "gauge",
    help: "Keys blocked on this instance, at most maxBlocks, apart from the key table.",
    series: (s) => one(s.blockedKeys),
  },
  {
    name: "rateguard_blocks_evicted_total",
    kind: "counter",
    help: "Blocks ended early to make room for a newer one: raise maxBlocks if it grows.",
    series: (s) => one(s.blocksEvicted),
  },
  {
    name: "rateguard_hot_keys",
    kind: "gauge",
    help: "Keys coordinated with the peers.",
    series: (s) => one(s.hotKeys),
  },
  {
    name: "rateguard_held",
    kind: "gauge",
    help: "1 when every key is held at the floor, by reason.",
    series: (s) => [
      [{ reason: "joining" }, Number(s.joining)],
      [{ reason: "learning" }, Number(s.learning)],
      [{ reason: "without_quorum" }, Number(s.withoutQuorum)],
      [{ reason: "members_full" }, Number(s.membersFull)],
    ],
  },
  {
    name: "rateguard_unresolved_seeds",
    kind: "gauge",
    help:
      "Seed names that give no address now (never answered, answered empty, or failing); see stats().joinBlocked.",
    series: (s) => one(s.unresolvedSeeds.length),
  },
  {
    name: "rateguard_since_last_round_ms",
    kind: "gauge",
    help:
      "Milliseconds since the last gossip round; far over the protocol period, the background task is stuck.",
    series: (s) => one(s.sinceLastRoundMs),
  },
  {
    name: "rateguard_running",
    kind: "gauge",
    help: "1 while the guard runs.",
    series: (s) => one(s.running),
  },
  {
    name: "rateguard_dry_run",
    kind: "gauge",
    help: "1 in a dry run: every check admitted, would-be denials counted.",
    series: (s) => one(s.dryRun),
  },
  {
    name: "rateguard_gossip_auth",
    kind: "gauge",
    help: "1 for the instance's signing mode.",
    series: (s) =>
      (["off", "transitional", "required"] as const).map((mode) =>
        [{ mode }, Number(s.gossipAuth === mode)] as const
      ),
  },
];
