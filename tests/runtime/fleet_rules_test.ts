// Two guards in one process on 127.0.0.1 with fleetRules(true): what the
// admin methods change on one is what the other holds; and the option's
// mistakes. Real sockets, bounded in time.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { GossipAuth, Guard, KeyLimit, Limit } from "../../mod.ts";

async function until(probe: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function spawn(seeds: string[], fleetRules = true): Promise<Guard> {
  return Guard.builder().bind("127.0.0.1:0").gossipAuth(GossipAuth.Off).seeds(seeds)
    .protocolPeriodMs(20).limit(100)
    .fleetRules(fleetRules).spawn();
}

describe("fleet rules between two guards", { timeout: 60_000 }, () => {
  it("a change through one guard's admin methods applies on the other", async () => {
    const a = await spawn([]);
    const b = await spawn([a.address()!]);
    try {
      await until(() => b.clusterSize() === 2 && !b.stats().rules.learning, "b joined and learned");
      a.setClass("pro", Limit.perMinute(600));
      a.setShadow("pro", Limit.perMinute(60));
      a.setKeyLimit("tenant:1", KeyLimit.class("pro"), { class: "pro" });
      b.setKeyLimits([["", "ip:1", Limit.perSecond(3)], ["", "ip:2", Limit.perSecond(4)]]);
      b.setDryRun(true);
      await until(
        () => a.keyLimits().length === 3 && b.keyLimits().length === 3 && a.stats().dryRun,
        "both hold every rule",
      );
      assert.equal(String(b.classes().find(([n]) => n === "pro")?.[1]), "600/min");
      assert.equal(String(b.shadows().find(([n]) => n === "pro")?.[1]), "60/min");
      assert.equal(a.stats().rules.digest, b.stats().rules.digest);
      assert.ok(a.stats().rules.shared && a.stats().rules.version > 0);
      // A bulk replace is a removal of what it leaves out.
      a.setKeyLimits([["", "ip:2", Limit.perSecond(5)]]);
      a.removeClass("pro");
      await until(
        () => b.keyLimits().length === 1 && !b.classes().length,
        "b follows the removals",
      );
      assert.equal(String(b.keyLimits()[0][2]), "5/s");
    } finally {
      await Promise.all([a.leave(), b.leave()]);
    }
  });

  it("is off by default: a guard without it neither sends nor takes rules", async () => {
    const a = await spawn([]);
    const b = await spawn([a.address()!], false);
    try {
      await until(() => b.clusterSize() === 2, "b joined");
      a.setKeyLimit("k", Limit.perSecond(1));
      b.setKeyLimit("j", Limit.perSecond(1));
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.deepEqual(b.keyLimits().map(([, k]) => k), ["j"]);
      assert.deepEqual(a.keyLimits().map(([, k]) => k), ["k"]);
      assert.equal(b.stats().rules.shared, false);
    } finally {
      await Promise.all([a.leave(), b.leave()]);
    }
  });

  it("needs bind: rules are shared by gossip", async () => {
    await assert.rejects(Guard.builder().limit(1).fleetRules(true).spawn(), RangeError);
    assert.throws(() => Guard.builder().fleetRules("yes" as unknown as boolean), TypeError);
  });
});
