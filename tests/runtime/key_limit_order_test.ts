// Every method about one key takes (key, options): setKeyLimit(key, limit,
// { class }) and removeKeyLimit(key, { class }), as check, reset and block
// do. The class-first order of 0.2.0 is refused with a TypeError that says
// the key comes first, never taken for a key of the default class.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard, KeyLimit, Limit } from "../../mod.ts";

describe("key limits take (key, options)", () => {
  it("sets, reads and removes a key's limit in its class", async () => {
    await using guard = await Guard.builder().limit(10).class("pro", Limit.perSecond(100)).spawn();
    guard.setKeyLimit("tenant:42", Limit.perSecond(2_000), { class: "pro" });
    guard.setKeyLimit("tenant:7", KeyLimit.class("pro"));
    assert.equal(guard.limitFor("tenant:42", { class: "pro" }).ratePerSec(), 2_000);
    assert.equal(guard.limitFor("tenant:42").ratePerSec(), 10, "the default class's key is apart");
    assert.equal(guard.limitFor("tenant:7").ratePerSec(), 100);
    assert.equal(guard.removeKeyLimit("tenant:42"), false, "none in the default class");
    assert.equal(guard.removeKeyLimit("tenant:42", { class: "pro" }), true);
    assert.equal(guard.keyLimits().length, 1);
  });

  it("refuses the class-first order of 0.2.0, saying the key comes first", async () => {
    await using guard = await Guard.builder().limit(10).class("pro", Limit.perSecond(100)).spawn();
    const old = guard as unknown as {
      setKeyLimit(c: string, k: string, l: Limit): void;
      removeKeyLimit(c: string, k: string): boolean;
    };
    assert.throws(() => old.setKeyLimit("pro", "tenant:42", Limit.perSecond(1)), {
      name: "TypeError",
      message: /key first/,
    });
    guard.setKeyLimit("pro", Limit.perSecond(1)); // a key named "pro", in the default class
    assert.throws(() => old.removeKeyLimit("", "pro"), {
      name: "TypeError",
      message: /key comes first/,
    });
    assert.equal(guard.keyLimits().length, 1, "nothing was removed");
  });
});
