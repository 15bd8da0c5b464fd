// Reading the stats leaves no trace, and the noted set never fills with
// keys that have cooled: forgetting them is the deny path's job, not a read's.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard, Limit } from "../../mod.ts";
import { Enforcer } from "../../src/core/enforcer.ts";
import { LimitBook } from "../../src/core/rules.ts";
import { PUBLIC_HASH_KEY } from "../../src/core/hash.ts";
import { mostDenied } from "../../src/runtime/keystats.ts";
import { sidecarApp } from "../../src/http/sidecar.ts";

/** Long enough after one denial for a key to have cooled. */
const COOLED_AT_MS = 600_000;

function enforcer(maxNoted: number): Enforcer {
  const book = new LimitBook(Limit.perSecond(1).burst(1), { maxClasses: 4, maxKeyLimits: 4 });
  return new Enforcer(book, { capacity: 64, overflowScale: 0.5, maxNoted });
}

/** Denies each key once (its second request) at `nowMs`. */
function denyOnce(e: Enforcer, keys: readonly string[], nowMs: number): void {
  for (const key of keys) {
    e.check("", key, 1, nowMs);
    assert.equal(e.check("", key, 1, nowMs).allowed, false);
  }
}

const top = (e: Enforcer, nowMs: number) =>
  mostDenied(e, { k: 10, nowMs, hashKey: PUBLIC_HASH_KEY });

describe("noted keys", () => {
  it("reading mostDenied does not change the noted set, even when keys have cooled", () => {
    const e = enforcer(4);
    denyOnce(e, ["a", "b", "c"], 0);
    const before = [...e.noted].map((slot) => slot.key);
    const first = top(e, COOLED_AT_MS);
    assert.deepEqual(first.mostDenied, [], "all have cooled");
    assert.deepEqual([...e.noted].map((slot) => slot.key), before, "the read forgot nothing");
    assert.deepEqual(top(e, COOLED_AT_MS), first);
  });

  it("a key denied once the set is full of cooled keys is noted, with no read between", () => {
    const e = enforcer(4);
    denyOnce(e, ["a", "b", "c", "d"], 0);
    assert.equal(e.noted.size, 4);
    denyOnce(e, ["fresh"], COOLED_AT_MS);
    const hashes = top(e, COOLED_AT_MS).mostDenied.map((x) => x.hash);
    assert.equal(hashes.length, 1, `listed ${hashes.length}`);
    assert.ok(e.noted.size <= 4, "still bounded");
  });

  it("keys still denied are not forgotten to make room", () => {
    const e = enforcer(2);
    denyOnce(e, ["a", "b"], 0);
    denyOnce(e, ["late"], 100);
    assert.equal(e.noted.size, 2);
    assert.equal(top(e, 100).mostDenied.length, 2);
  });

  it("a guard's mostDenied does not depend on whether stats() was read before", async () => {
    const keys = Array.from({ length: 4_096 }, (_, i) => `k${i}`);
    const run = async (readBetween: boolean) => {
      let t = 0;
      const guard = await Guard.builder().defaultLimit(Limit.perSecond(1).burst(1)).clock(() => t)
        .spawn();
      for (const key of keys) guard.check(key), guard.check(key);
      t = COOLED_AT_MS;
      if (readBetween) guard.stats();
      for (let i = 0; i < 3; i++) guard.check("fresh");
      const listed = guard.stats().mostDenied.map((x) => x.hash);
      await guard.leave();
      return { listed, fresh: guard.keyHash("fresh") };
    };
    const read = await run(true);
    const unread = await run(false);
    assert.deepEqual(read.listed, [read.fresh]);
    assert.deepEqual(unread.listed, read.listed, "a read changed what a later read shows");
  });
});

describe("/readyz", () => {
  it("answers from the cheap readings, without computing the stats", async () => {
    const guard = await Guard.builder().limit(1).spawn();
    guard.stats = () => {
      throw new Error("readiness computed the whole stats");
    };
    const app = sidecarApp(guard);
    const res = await app.request("/readyz");
    assert.deepEqual([res.status, await res.text()], [200, "ready\n"]);
    await guard.leave();
    const gone = await app.request("/readyz");
    assert.deepEqual([gone.status, await gone.text()], [503, "stopped\n"]);
  });
});
