import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard, KeyLimit, Limit, PartitionPolicy, RateguardError } from "../mod.ts";

// Limits an hour long keep these tests independent of the wall clock: no
// key replenishes in the milliseconds a test takes.
const slow = (n: number) => Limit.perHour(n).burst(n);

describe("Guard (standalone)", () => {
  it("checks keys in the default class and in classes", async () => {
    const guard = await Guard.builder().defaultLimit(slow(2)).class("pro", slow(3)).spawn();
    assert.deepEqual([1, 2, 3].map(() => guard.check("k").allowed), [true, true, false]);
    assert.deepEqual([1, 2, 3, 4].map(() => guard.check("k", { class: "pro" }).allowed), [
      true,
      true,
      true,
      false,
    ]);
    assert.equal(guard.check("k2", { cost: 2 }).allowed, true);
    assert.equal(guard.check("k2", { class: "pro", cost: 4 }).retryAfterMs, Infinity);
    const s = guard.stats();
    assert.equal(s.admitted, 6);
    assert.equal(s.denied, 3);
    assert.equal(s.trackedKeys, 4);
    assert.equal(s.running, true);
    assert.equal(s.dryRun, false);
  });

  it("peeks without consuming, and traces shadows", async () => {
    const guard = await Guard.builder().defaultLimit(slow(2)).spawn();
    assert.equal(guard.peek("k").remaining, 1);
    assert.equal(guard.peek("k").remaining, 1);
    assert.equal(guard.stats().trackedKeys, 0);
    guard.setShadow("", slow(1));
    assert.equal(guard.checkTraced("k").shadow?.allowed, true);
    const t = guard.checkTraced("k");
    assert.equal(t.decision.allowed, true);
    assert.equal(t.shadow?.allowed, false);
    assert.equal(guard.stats().shadowDenied, 1);
    assert.deepEqual(guard.shadows().map(([c, l]) => [c, String(l)]), [["", "1/h burst 1"]]);
    guard.setShadows([]);
    assert.equal(guard.checkTraced("k").shadow, undefined);
  });

  it("tells a key's share and describes itself as a fleet of one", async () => {
    const guard = await Guard.builder().limit(100).class("slow", Limit.perMinute(60)).spawn();
    assert.equal(guard.share("k"), 100);
    assert.equal(guard.share("k", { class: "slow" }), 1);
    assert.equal(guard.share("k", { class: "unknown" }), 100);
    const s = guard.stats();
    assert.deepEqual(
      [
        s.clusterSize,
        s.countedSize,
        s.suspects,
        s.joining,
        s.learning,
        s.withoutQuorum,
        s.membersFull,
        s.hotKeys,
      ],
      [1, 1, 0, false, false, false, false, 0],
    );
    assert.throws(() => guard.share(""), TypeError);
  });

  it("changes limits live", async () => {
    const guard = await Guard.builder().defaultLimit(slow(1)).spawn();
    guard.setClass("a", slow(5));
    assert.equal(guard.check("k", { class: "a", cost: 5 }).allowed, true);
    guard.setClasses([["b", slow(1)]]);
    assert.deepEqual(guard.classes().map(([n]) => n), ["b"]);
    assert.equal(guard.removeClass("b"), true);
    guard.setLimit(slow(3));
    assert.equal(guard.check("x", { cost: 3 }).allowed, true);
    guard.setKeyLimit("vip", slow(10));
    guard.setKeyLimit("follower", KeyLimit.class("gone"));
    assert.equal(guard.check("vip", { cost: 10 }).allowed, true);
    assert.equal(guard.keyLimits().length, 2);
    assert.equal(guard.removeKeyLimit("vip"), true);
    guard.setKeyLimits([]);
    assert.equal(guard.keyLimits().length, 0);
    assert.equal(
      guard.check("k", { class: "a" }).allowed,
      false,
      "class a is gone: its key keeps its debt",
    );
    assert.equal(guard.stats().unknownClass, 1);
  });

  it("in a dry run admits all and counts would-be denials; enforcement turns on live", async () => {
    const guard = await Guard.builder().defaultLimit(slow(1)).dryRun(true).spawn();
    assert.ok([1, 2, 3].every(() => guard.check("k").allowed));
    assert.equal(guard.stats().denied, 2);
    assert.equal(guard.stats().dryRun, true);
    guard.setDryRun(false);
    assert.equal(guard.check("k").allowed, false);
    // @ts-expect-error: not a boolean
    assert.throws(() => guard.setDryRun("yes"), TypeError);
  });

  it("checkAll is all or nothing", async () => {
    const guard = await Guard.builder().defaultLimit(slow(1)).spawn();
    guard.check("b");
    assert.equal(guard.checkAll([{ key: "a" }, { key: "b" }]).allowed, false);
    assert.equal(guard.peek("a").allowed, true);
    assert.throws(() => guard.checkAll([{ key: "a" }, { key: "a" }]), TypeError);
  });

  it("admits exactly the burst to concurrent callers: no await between read and write", async () => {
    const guard = await Guard.builder().defaultLimit(slow(25)).spawn();
    // The decision is made before check() returns, not in a later turn.
    assert.equal(typeof (guard.check("probe") as unknown as { then?: unknown }).then, "undefined");
    // 200 callers started in one turn, each awaiting its decision: were a
    // check to read the key, await, then write, they would all read the
    // same full bucket and all be admitted.
    const results = await Promise.all(
      Array.from({ length: 200 }, async () => (await guard.check("contended")).allowed),
    );
    assert.equal(results.filter(Boolean).length, 25);
  });

  it("bounds the key table", async () => {
    const guard = await Guard.builder().defaultLimit(slow(5)).trackedKeys(64).hotKeys(64).spawn();
    for (let i = 0; i < 10_000; i++) guard.check(`ip:${i}`);
    assert.ok(guard.stats().trackedKeys <= 128);
    assert.ok(guard.stats().overflowed >= 10_000 - 128);
  });

  it("leaves, also through await using", async () => {
    const guard = await Guard.builder().limit(10).spawn();
    {
      await using scoped = guard;
      assert.equal(scoped.isRunning(), true);
    }
    assert.equal(guard.isRunning(), false);
    assert.equal(guard.stats().running, false);
    assert.equal(guard.check("still").allowed, true, "checks go on after leave");
  });

  it("validates the builder with messages naming the value", async () => {
    await assert.rejects(Guard.builder().spawn(), { name: "TypeError", message: /limit/ });
    await assert.rejects(Guard.builder().limit(10).trackedKeys(10).spawn(), {
      name: "RangeError",
      message: /trackedKeys \(10\).*hotKeys \(64\)/,
    });
    assert.throws(() => Guard.builder().limit(-1), { name: "RangeError", message: /-1/ });
    assert.throws(() => Guard.builder().limit(NaN), RangeError);
    // A Limit where a number goes: pointed to the method that takes one.
    assert.throws(
      () => Guard.builder().limit(Limit.perMinute(10) as unknown as number),
      {
        name: "TypeError",
        message: /limit\(perSec\) takes requests a second; give a Limit to defaultLimit\(limit\)/,
      },
    );
    assert.throws(() => Guard.builder().burst(5_000_000), {
      name: "RangeError",
      message: /5000000/,
    });
    assert.throws(() => Guard.builder().trackedKeys(2_000_000), {
      name: "RangeError",
      message: /2000000/,
    });
    assert.throws(() => Guard.builder().hotKeys(65), { name: "RangeError", message: /65/ });
    assert.throws(() => Guard.builder().maxClasses(5_000), { name: "RangeError", message: /5000/ });
    // A bound out of range is the caller's mistake, named like every other.
    assert.throws(() => Guard.builder().maxKeyLimits(1_048_577), {
      name: "RangeError",
      message: /maxKeyLimits.*1048577/,
    });
    assert.throws(() => Guard.builder().hotKeys("8" as unknown as number), {
      name: "TypeError",
      message: /hotKeys.*"8"/,
    });
    assert.throws(() => Guard.builder().partitionPolicy("pessimistic"), {
      name: "TypeError",
      message: /"pessimistic"/,
    });
    assert.throws(() => Guard.builder().class("", Limit.perSecond(1)), TypeError);
    await assert.rejects(
      Guard.builder().limit(1).maxClasses(1).class("a", Limit.perSecond(1)).class(
        "b",
        Limit.perSecond(1),
      ).spawn(),
      { name: "RangeError", message: /maxClasses \(1\)/ },
    );
  });

  it("refuses more key limits than maxKeyLimits", async () => {
    const guard = await Guard.builder().limit(10).maxKeyLimits(1).spawn();
    guard.setKeyLimit("a", Limit.perSecond(1));
    assert.throws(
      () => guard.setKeyLimit("b", Limit.perSecond(1)),
      (e) => e instanceof RateguardError && e.code === "TooManyKeyLimits",
    );
  });

  it("applies the burst to the default limit, in any order", async () => {
    const a = await Guard.builder().burst(3).defaultLimit(Limit.perHour(100)).spawn();
    assert.equal(a.peek("k").remaining, 2);
    const b = await Guard.builder().limit(1_000).spawn();
    assert.equal(b.peek("k").remaining, 49, "default burst: a twentieth of 1000");
  });
});

describe("PartitionPolicy", () => {
  it("parses its names and durations", () => {
    assert.equal(PartitionPolicy.parse("optimistic").kind, "optimistic");
    assert.equal(PartitionPolicy.parse("quorum").kind, "quorum");
    assert.equal(PartitionPolicy.parse("holddown").holdMs, 10_000);
    assert.equal(PartitionPolicy.parse("holddown:500ms").holdMs, 500);
    assert.equal(PartitionPolicy.parse("holddown:2m").holdMs, 120_000);
    assert.equal(PartitionPolicy.holdDown(60_000).toString(), "holddown:60000ms");
    assert.throws(() => PartitionPolicy.parse("holddown:soon"), {
      name: "TypeError",
      message: /soon/,
    });
    assert.throws(() => PartitionPolicy.holdDown(-1), RangeError);
  });
});

describe("Guard security settings", () => {
  it("hashes keys by its salt, and tells its signing mode", async () => {
    const { GossipAuth, Secret } = await import("../mod.ts");
    const plain = await Guard.builder().limit(10).spawn();
    const salted = await Guard.builder().limit(10).keySalt(new Uint8Array(16).fill(9)).spawn();
    const otherSalt = await Guard.builder().limit(10).keySalt(new Uint8Array(24).fill(9)).spawn();
    assert.equal(typeof plain.keyHash("tenant:42", { class: "pro" }), "bigint");
    assert.equal(
      plain.keyHash("tenant:42", { class: "pro" }),
      plain.keyHash("tenant:42", { class: "pro" }),
    );
    assert.notEqual(
      plain.keyHash("tenant:42", { class: "pro" }),
      salted.keyHash("tenant:42", { class: "pro" }),
    );
    assert.notEqual(
      salted.keyHash("tenant:42", { class: "pro" }),
      otherSalt.keyHash("tenant:42", { class: "pro" }),
    );
    assert.notEqual(plain.keyHash("protenant:42"), plain.keyHash("tenant:42", { class: "pro" }));
    assert.throws(() => Guard.builder().keySalt(new Uint8Array(15)), {
      name: "RangeError",
      message: /16/,
    });
    assert.equal(plain.stats().gossipAuth, "off");
    const secret = new Secret(new Uint8Array(32).fill(1));
    plain.setGossipAuth(GossipAuth.Transitional, [secret]);
    assert.equal(plain.stats().gossipAuth, "transitional");
    assert.deepEqual(plain.stats().rejectedDatagrams, {
      unsigned: 0,
      badTag: 0,
      malformed: 0,
      mismatchedRecords: 0,
    });
    assert.throws(() => plain.setGossipAuth(GossipAuth.Required, []), RangeError);
    assert.throws(
      () => Guard.builder().gossipAuth(GossipAuth.Required, [secret, secret, secret]),
      RangeError,
    );
    assert.ok(!JSON.stringify(plain.stats()).includes("\\u0001"), "no secret in stats");
  });
});
