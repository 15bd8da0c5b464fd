import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard, Limit } from "../mod.ts";
import { mostDenied } from "../src/runtime/keystats.ts";
import { collectStats } from "../src/runtime/stats.ts";
import { PUBLIC_HASH_KEY } from "../src/core/hash.ts";
import { rig } from "./core/support.ts";
import { VERSION } from "../src/version.ts";
import { readFileSync } from "node:fs";

/** Offers each key its rate for `seconds`, interleaved in time, from `startMs`. */
function traffic(
  r: ReturnType<typeof rig>,
  rates: Record<string, number>,
  seconds: number,
  startMs = 0,
): void {
  const events: [number, string][] = [];
  for (const [key, perSec] of Object.entries(rates)) {
    for (let i = 0; i < perSec * seconds; i++) events.push([startMs + (i * 1_000) / perSec, key]);
  }
  events.sort((a, b) => a[0] - b[0]);
  for (const [t, key] of events) r.enforcer.check("", key, 1, t);
}

describe("mostDenied", () => {
  it("ranks the keys denied most lately, with their rates", () => {
    const r = rig(Limit.perSecond(10).burst(1));
    traffic(r, { a: 100, b: 50, c: 20, quiet: 5 }, 20);
    const { mostDenied: top } = mostDenied(r.enforcer, {
      k: 3,
      nowMs: 20_000,
      hashKey: PUBLIC_HASH_KEY,
    });
    const guard = { byKey: (k: string) => top.find((x) => x.hash === hashOf(k)) };
    assert.equal(top.length, 3);
    assert.deepEqual(
      top.map((x) => x.hash),
      ["a", "b", "c"].map(hashOf),
      "a, then b, then c; quiet is never denied",
    );
    const a = guard.byKey("a")!;
    assert.ok(Math.abs(a.deniedPerSec - 90) < 15, `a denied ${a.deniedPerSec}/s`);
    assert.ok(Math.abs(a.requestsPerSec - 100) < 15, `a requested ${a.requestsPerSec}/s`);
    // "Lately": a key denied now outranks one that was, a minute ago.
    traffic(r, { d: 50 }, 60, 20_000);
    const later =
      mostDenied(r.enforcer, { k: 3, nowMs: 80_000, hashKey: PUBLIC_HASH_KEY }).mostDenied;
    assert.equal(later[0].hash, hashOf("d"));
    assert.ok(later.find((x) => x.hash === hashOf("a"))!.deniedPerSec < 1, "a has cooled");
    assert.equal(
      mostDenied(r.enforcer, { k: 0, nowMs: 80_000, hashKey: PUBLIC_HASH_KEY }).mostDenied.length,
      0,
    );
  });

  it("mostShadowDenied ranks by what the shadow would deny", () => {
    const r = rig(Limit.perSecond(1_000).burst(1));
    r.book.setShadow("", Limit.perSecond(10).burst(1));
    traffic(r, { x: 20, y: 60 }, 10);
    const m = mostDenied(r.enforcer, { k: 10, nowMs: 10_000, hashKey: PUBLIC_HASH_KEY });
    assert.deepEqual(m.mostDenied, [], "nothing really denied");
    assert.deepEqual(m.mostShadowDenied.map((x) => x.hash), [hashOf("y"), hashOf("x")]);
  });
});

function hashOf(key: string): bigint {
  return guardForHashes.keyHash(key);
}
const guardForHashes = await Guard.builder().limit(1).spawn();

describe("keyStats", () => {
  it("tells one key's rates, share, limit and shadow; an unknown key is undefined and gets no state", async () => {
    const guard = await Guard.builder().limit(5).burst(5).class("pro", Limit.perHour(100)).spawn();
    guard.setShadow("pro", Limit.perHour(10));
    assert.equal(guard.keyStats("nobody", { class: "pro" }), undefined);
    assert.equal(guard.stats().trackedKeys, 0, "asking made no state");
    for (let i = 0; i < 8; i++) guard.check("t", { class: "pro" });
    const k = (guard.keyStats("t", { class: "pro" }))!;
    assert.ok(k.requestsPerSec > 0);
    assert.equal(String(k.limit), "100/h");
    assert.equal(String(k.shadow), "10/h");
    assert.ok(Math.abs(k.share - 100 / 3600) < 1e-9);
    assert.equal(guard.stats().trackedKeys, 1);
    assert.throws(() => guard.keyStats("", { class: "pro" }), TypeError);
  });

  it("reads a young key's rates over the last ten seconds, not over its short life", async () => {
    let nowMs = 1_000;
    const guard = await Guard.builder().limit(1_000).clock(() => nowMs).spawn();
    guard.check("once");
    nowMs += 1;
    // One request in the last ten seconds: 0.1 a second (not 1000, its rate over 1 ms of life).
    assert.equal(guard.keyStats("once")!.requestsPerSec, 0.1);
    for (let i = 0; i < 5; i++) guard.check("young", { cost: 2 });
    nowMs += 4_000;
    assert.equal(guard.keyStats("young")!.requestsPerSec, 1, "10 in a life of 4 s");
    for (let i = 0; i < 200; i++) guard.check("old");
    nowMs += 20_000;
    assert.equal(guard.keyStats("old")!.requestsPerSec, 10, "200 over a life of 20 s");
    await guard.leave();
  });

  it("a dry run counts exactly the denials enforcing gives under the same traffic", () => {
    const dry = rig(Limit.perSecond(10).burst(3));
    dry.enforcer.dryRun = true;
    traffic(dry, { a: 40, b: 15, c: 5 }, 30);
    const enforcing = rig(Limit.perSecond(10).burst(3));
    traffic(enforcing, { a: 40, b: 15, c: 5 }, 30);
    assert.equal(dry.enforcer.counters.denied, enforcing.enforcer.counters.denied);
    assert.ok(dry.enforcer.counters.denied > 0);
  });
});

describe("stats", () => {
  it("carries every field of its sources", () => {
    const r = rig(Limit.perSecond(10));
    const fleet = {
      clusterSize: 5,
      countedSize: 6,
      suspects: 1,
      joining: true,
      learning: true,
      withoutQuorum: true,
      membersFull: true,
      hotKeys: 3,
      sinceLastRoundMs: 42,
      identityConflicts: 2,
      suspectLooks: 15,
      corrections: 16,
      membersRefused: 7,
      withheldDatagrams: 13,
      withheldBytes: 14,
      malformed: 4,
      mismatchedRecords: 9,
    };
    const s = collectStats({
      nowMs: 0,
      enforcer: r.enforcer,
      fleet: fleet as unknown as Parameters<typeof collectStats>[0]["fleet"],
      gossip: {
        unsigned: 11,
        badTag: 12,
        socketErrors: 0,
        datagramsSent: 0,
        bytesSent: 0,
        datagramsReceived: 0,
        bytesReceived: 0,
      },
      running: false,
      gossipAuth: "required",
      most: { mostDenied: [], mostShadowDenied: [] },
    });
    for (const [k, v] of Object.entries(fleet)) {
      if (k === "malformed" || k === "mismatchedRecords") continue;
      assert.equal((s as unknown as Record<string, unknown>)[k], v, k);
    }
    assert.deepEqual(s.rejectedDatagrams, {
      unsigned: 11,
      badTag: 12,
      malformed: 4,
      mismatchedRecords: 9,
    });
    assert.equal(s.gossipAuth, "required");
    assert.equal(s.running, false);
    // The release, beside what it did: not rules.version, the rules' clock.
    assert.equal(s.guardVersion, VERSION);
    assert.equal(s.guardVersion, JSON.parse(readFileSync("deno.json", "utf8")).version);
  });
});
