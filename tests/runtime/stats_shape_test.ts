// stats() is one shape, composed of its sources' figures under their own
// names: a standalone guard and one in a fleet show the same fields, and no
// field of the node's own workings (incarnation, awareness, tombstones,
// left, held) leaks into the JSON the sidecar, the metrics and the clients read.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { GossipAuth, Guard, type Stats } from "../../mod.ts";

/** Every field of the public `Stats`, as the sidecar's `/v1/stats` serves it. */
const FIELDS: readonly (keyof Stats)[] = [
  "guardVersion",
  "admitted",
  "denied",
  "overflowed",
  "unknownClass",
  "shadowDenied",
  "trackedKeys",
  "blockedKeys",
  "blocksEvicted",
  "dryRun",
  "running",
  "clusterSize",
  "countedSize",
  "suspects",
  "joining",
  "joinBlocked",
  "unresolvedSeeds",
  "learning",
  "withoutQuorum",
  "membersFull",
  "hotKeys",
  "sinceLastRoundMs",
  "cutRecords",
  "identityConflicts",
  "suspectLooks",
  "corrections",
  "membersRefused",
  "withheldDatagrams",
  "withheldBytes",
  "gossipAuth",
  "rejectedDatagrams",
  "skippedSections",
  "rules",
  "mostDenied",
  "mostShadowDenied",
];

const RULES_FIELDS = [
  "shared",
  "learning",
  "version",
  "digest",
  "outOfStep",
  "apartMs",
  "outOfStepReason",
  "live",
  "removed",
  "applied",
  "refused",
  "malformed",
  "strangers",
  "skippedParts",
  "unproven",
  "full",
  "unshared",
  "entries",
  "bound",
  "reserved",
  "own",
  "peers",
  "strangerEntries",
  "tableFull",
  "tableFullReason",
  "transfers",
  "refusals",
  "lastRefusal",
];

describe("stats() shape", () => {
  it("is the same, field for field, standalone and in a fleet", async () => {
    await using alone = await Guard.builder().limit(10).spawn();
    await using fleet = await Guard.builder().limit(10).bind("127.0.0.1:0")
      .gossipAuth(GossipAuth.Off).fleetRules(true).spawn();
    alone.check("k");
    fleet.check("k");
    for (const stats of [alone.stats(), fleet.stats()]) {
      assert.deepEqual(Object.keys(stats).sort(), [...FIELDS].sort());
      assert.deepEqual(Object.keys(stats.rules).sort(), [...RULES_FIELDS].sort());
      assert.deepEqual(Object.keys(stats.rejectedDatagrams).sort(), [
        "badTag",
        "malformed",
        "mismatchedRecords",
        "unsigned",
      ]);
      assert.equal(stats.admitted, 1);
      assert.equal(stats.trackedKeys, 1);
    }
    const [a, f] = [alone.stats(), fleet.stats()];
    assert.deepEqual([a.clusterSize, a.countedSize, a.rules.shared], [1, 1, false]);
    assert.deepEqual([f.clusterSize, f.rules.shared], [1, true]);
  });
});
