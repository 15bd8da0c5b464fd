import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Node, parseSeed } from "../../src/core/membership/mod.ts";
import { Cluster } from "../../src/sim/faces/cluster.ts";
import { seedName } from "../../src/sim/driver/names.ts";
import { Fleet } from "../../src/sim/faces/fleet.ts";
import { Limit } from "../../src/core/limit.ts";
import { addr, sent } from "./helpers.ts";

const NAME = "rateguard.svc:7946";

/** The host names node asks to look up now. */
function lookups(node: Node): string[] {
  const out = [];
  for (let r = node.pollResolve(); r; r = node.pollResolve()) out.push(r.host);
  return out;
}

describe("seeds", () => {
  it("are read once, in the core: ip:port, [v6]:port or host:port", () => {
    assert.equal(parseSeed("10.0.0.1:7946").address?.toString(), "10.0.0.1:7946");
    assert.equal(parseSeed("[2001:db8::1]:7946").address?.toString(), "[2001:db8::1]:7946");
    assert.deepEqual(parseSeed(NAME), { host: "rateguard.svc", port: 7946, address: undefined });
    for (const bad of ["10.0.0.1", "host:99999", ":7946", "a b:1", "[::1:7946", "[host]:1", ""]) {
      assert.throws(() => parseSeed(bad), TypeError, bad);
      assert.throws(() => new Node(addr(1), { seed: 1, seeds: [bad] }), TypeError, bad);
    }
  });

  it("a node without seeds starts a fleet: not joining", () => {
    assert.equal(new Node(addr(1), { seed: 1 }).joining, false);
    assert.equal(
      new Node(addr(1), { seed: 1, seeds: [addr(1).toString()] }).joining,
      false,
      "only itself",
    );
  });

  it("an IP seed is one from the start: joining, and the first timeout sends it a join", () => {
    const node = new Node(addr(1), { seed: 1, seeds: [addr(2).toString()] });
    assert.equal(node.joining, true);
    node.handleTimeout(0);
    assert.deepEqual(lookups(node), [], "an IP is not looked up");
    assert.deepEqual(sent(node).map((s) => [s.to, s.message.type]), [["10.0.0.2:7946", "join"]]);
  });

  it("a name is joining before any answer, and the node asks for its lookup", () => {
    const node = new Node(addr(1), { seed: 1, seeds: [NAME] });
    assert.equal(node.joining, true);
    node.handleTimeout(0);
    assert.deepEqual(lookups(node), ["rateguard.svc"]);
    assert.deepEqual(sent(node), [], "no one to send to yet");
    // The answer brings a join at once, not a period later.
    node.handleResolved(3, NAME, ["10.0.0.2", "10.0.0.1", "not an ip"]);
    assert.deepEqual(sent(node).map((s) => [s.to, s.message.type]), [["10.0.0.2:7946", "join"]]);
    assert.equal(node.joining, true, "a seed to try is not a peer reached");
  });

  it("a name that names only this node makes it the first of its fleet", () => {
    const node = new Node(addr(1), { seed: 1, seeds: [NAME] });
    node.handleTimeout(0);
    lookups(node);
    node.handleResolved(1, NAME, ["10.0.0.1"]);
    assert.equal(node.joining, false);
    // Later pods appear under the name: it stays a member, not a newcomer.
    node.handleTimeout(30_001);
    assert.deepEqual(lookups(node), ["rateguard.svc"], "looked up again after 30 s");
    node.handleResolved(30_002, NAME, ["10.0.0.1", "10.0.0.2"]);
    assert.equal(node.joining, false);
  });

  it("an empty answer or a failure names no one: still joining, asked again soon", () => {
    const node = new Node(addr(1), { seed: 1, seeds: [NAME] });
    node.handleTimeout(0);
    lookups(node);
    node.handleResolved(1, NAME, []);
    assert.equal(node.joining, true);
    node.handleTimeout(29_999);
    assert.deepEqual(lookups(node), []);
    node.handleTimeout(30_001);
    assert.deepEqual(lookups(node), ["rateguard.svc"]);
    // Failures back off: 1 s, 2 s, 4 s... up to 30 s.
    let nowMs = 30_001;
    const gaps = [];
    for (let i = 0; i < 7; i++) {
      node.handleResolveFailed(nowMs, NAME);
      const due = node.pollTimeout()!;
      assert.ok(due <= nowMs + 30_000);
      let t = nowMs;
      while (lookups(node).length === 0) node.handleTimeout(t += 250);
      gaps.push(t - nowMs);
      nowMs = t;
    }
    assert.deepEqual(gaps, [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    assert.equal(node.joining, true);
    assert.throws(() => node.handleResolved(nowMs, "other:1", []), RangeError);
  });

  it("a new answer replaces the old", () => {
    const node = new Node(addr(1), { seed: 1, seeds: [NAME] });
    node.handleTimeout(0);
    lookups(node);
    const many = Array.from({ length: 1_000 }, (_, i) => `10.9.${i >> 8}.${i & 255}`);
    node.handleResolved(1, NAME, many);
    const first = sent(node);
    assert.equal(first.length, 1);
    node.handleResolved(2, NAME, ["10.0.0.3"]);
    // Alone, the node tries its seeds every period: only the new one is left.
    for (let t = 200; t <= 1_000; t += 200) node.handleTimeout(t);
    assert.deepEqual(new Set(sent(node).map((s) => s.to)), new Set(["10.0.0.3:7946"]));
  });

  it("in the simulator, seeds by name that answer late, empty or not at all", () => {
    const cluster = new Cluster({ seed: 3, size: 3 });
    cluster.runUntil(3_000);
    const late = cluster.add({ seedLookup: { delayMs: 2_000 } });
    const empty = cluster.add({ seedLookup: { answer: "nothing" } });
    const failing = cluster.add({ seedLookup: { answer: "fail", untilMs: 6_000 } });
    cluster.runUntil(4_900);
    for (const i of [late, empty, failing]) assert.equal(cluster.node(i)!.joining, true, `${i}`);
    cluster.runUntil(12_000);
    assert.equal(cluster.node(late)!.joining, false);
    assert.equal(cluster.node(failing)!.joining, false);
    assert.equal(cluster.node(empty)!.joining, true);
    assert.equal(cluster.node(empty)!.stats(12_000).clusterSize, 1);
    assert.equal(seedName(0), "node-0.sim:7946");
  });

  it("a name that never resolves is told: which, how many lookups failed, since when", () => {
    const node = new Node(addr(1), { seed: 1, seeds: [NAME, addr(3).toString()] });
    node.handleTimeout(0);
    assert.deepEqual(node.stats(0).unresolvedSeeds, [{
      seed: NAME,
      failedLookups: 0,
      emptyAnswer: false,
      unresolvedForMs: 0,
      sinceLastFailureMs: null,
    }]);
    let nowMs = 0;
    let failedMs = 0;
    for (let failed = 0; failed < 5;) {
      if (lookups(node).length > 0) node.handleResolveFailed(failedMs = nowMs + 10, NAME), failed++;
      node.handleTimeout(nowMs += 250);
    }
    const stats = node.stats(nowMs);
    assert.equal(stats.joining, true);
    assert.deepEqual(stats.unresolvedSeeds, [{
      seed: NAME,
      failedLookups: 5,
      emptyAnswer: false,
      unresolvedForMs: nowMs,
      sinceLastFailureMs: nowMs - failedMs,
    }]);
    assert.equal(
      stats.joinBlocked,
      "joining: no member answered at 1 seed address; " +
        "seed rateguard.svc:7946 has not resolved (5 lookups failed)",
    );
    // An empty answer is another reason; an answer with an address ends it.
    node.handleResolved(nowMs, NAME, []);
    assert.match(node.joinBlocked(nowMs), /seed rateguard\.svc:7946 resolved to no address$/);
    assert.equal(node.stats(nowMs).unresolvedSeeds[0].unresolvedForMs, nowMs, "the same stretch");
    node.handleResolved(nowMs, NAME, ["10.0.0.2"]);
    assert.deepEqual(node.stats(nowMs).unresolvedSeeds, []);
    assert.equal(node.joinBlocked(nowMs), "joining: no member answered at 2 seed addresses");
  });

  it("in the simulator, the reason lasts as long as the lookups fail, and clears once joined", () => {
    const fleet = new Fleet({ seed: 5, size: 2, limit: Limit.perSecond(100) });
    fleet.runUntil(2_000);
    const failing = fleet.add({ seedLookup: { answer: "fail", untilMs: 20_000 } });
    fleet.runUntil(19_000);
    const held = fleet.stats(failing)!;
    assert.equal(held.joining, true);
    assert.match(
      held.joinBlocked,
      /^joining: seed node-0\.sim:7946 has not resolved \(\d+ lookups failed\)$/,
    );
    assert.ok(
      held.unresolvedSeeds[0].failedLookups >= 4,
      `${held.unresolvedSeeds[0].failedLookups}`,
    );
    fleet.runUntil(60_000);
    const joined = fleet.stats(failing)!;
    assert.deepEqual([joined.joining, joined.joinBlocked, joined.unresolvedSeeds], [false, "", []]);
  });
});
