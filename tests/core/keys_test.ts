import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard, Limit } from "../../mod.ts";
import fc from "fast-check";
import { keyHash, PUBLIC_HASH_KEY, sipHashBytes, utf8Length } from "../../src/core/hash.ts";
import { DEFAULT_MAX_KEY_BYTES } from "../../src/core/key_bytes.ts";
import { rig } from "./support.ts";

const refusesLength = (max: number) => (e: unknown) =>
  e instanceof RangeError && e.message.includes(`${max} bytes`) &&
  e.message.includes("maxKeyBytes");

describe("key length is bounded in UTF-8 bytes", () => {
  it("the guard refuses a key longer than the default limit, naming it, everywhere a key is taken", async () => {
    assert.equal(DEFAULT_MAX_KEY_BYTES, 1_024);
    const guard = await Guard.builder().limit(10).spawn();
    const long = "x".repeat(DEFAULT_MAX_KEY_BYTES + 1);
    const refused = refusesLength(DEFAULT_MAX_KEY_BYTES);
    assert.throws(() => guard.check(long), refused);
    assert.throws(() => guard.check(long), refused);
    assert.throws(() => guard.checkTraced(long), refused);
    assert.throws(() => guard.checkAll([{ key: "ok" }, { key: long }]), refused);
    assert.throws(() => guard.peek(long), refused);
    assert.throws(() => guard.share(long), refused);
    assert.throws(() => guard.setKeyLimit(long, Limit.perSecond(1)), refused);
    assert.throws(() => guard.keyHash(long), refused);
    assert.throws(() => guard.keyStats(long), refused);
    // A refused check leaves nothing behind.
    assert.equal(guard.stats().trackedKeys, 0);
    assert.ok(guard.check("x".repeat(DEFAULT_MAX_KEY_BYTES)).allowed);
    await guard.leave();
  });

  it("counts UTF-8 bytes, not code units: two-, three- and four-byte characters", async () => {
    const guard = await Guard.builder().limit(10).maxKeyBytes(12).spawn();
    const refused = refusesLength(12);
    for (
      const [fits, over] of [["é".repeat(6), "é".repeat(6) + "x"], [
        "€".repeat(4),
        "€".repeat(4) + "x",
      ], [
        "😀".repeat(3),
        "😀".repeat(3) + "x",
      ], ["\ud800".repeat(4), "\ud800".repeat(4) + "x"]]
    ) {
      assert.ok(guard.check(fits).allowed, JSON.stringify(fits));
      assert.throws(() => guard.check(over), refused, JSON.stringify(over));
    }
    await guard.leave();
  });

  it("a class name is bounded as a key is", async () => {
    const guard = await Guard.builder().limit(10).maxKeyBytes(16).spawn();
    assert.throws(() => guard.check("k", { class: "c".repeat(17) }), refusesLength(16));
    assert.equal(guard.stats().trackedKeys, 0);
    await guard.leave();
  });

  it("maxKeyBytes takes a whole number from 1 to 65,536", () => {
    for (const bad of [0, -1, 1.5, 65_537, NaN, "8" as unknown as number]) {
      assert.throws(() => Guard.builder().maxKeyBytes(bad), /maxKeyBytes/);
    }
    Guard.builder().maxKeyBytes(1).maxKeyBytes(65_536);
  });

  it("the enforcer of ./core takes the limit from its book", () => {
    const r = rig(Limit.perSecond(10), { maxKeyBytes: 8 });
    assert.ok(r.enforcer.check("", "12345678", 1, 0).allowed);
    assert.throws(() => r.enforcer.check("", "123456789", 1, 0), refusesLength(8));
  });
});

describe("keys that differ only in lone surrogates", () => {
  it("hash apart: a lone surrogate is hashed as its code unit, not as U+FFFD", () => {
    const hashes = ["\ud800", "\ud801", "\udc00", "\ufffd", "a\ud800", "a\udbff"].map((k) =>
      keyHash(PUBLIC_HASH_KEY, "", k)
    );
    assert.equal(new Set(hashes).size, hashes.length);
    // A pair is one character, whatever its halves would be alone.
    assert.equal(keyHash(PUBLIC_HASH_KEY, "", "\ud83d\ude00"), keyHash(PUBLIC_HASH_KEY, "", "😀"));
    assert.notEqual(
      keyHash(PUBLIC_HASH_KEY, "", "\ude00\ud83d"),
      keyHash(PUBLIC_HASH_KEY, "", "😀"),
    );
  });
});

describe("utf8Length", () => {
  it("is the length TextEncoder gives, for any string, lone surrogates included", () => {
    const encoder = new TextEncoder();
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 64 }), (s) => {
        assert.equal(utf8Length(s), encoder.encode(s).length, JSON.stringify(s));
      }),
      { numRuns: 2_000 },
    );
  });

  it("measures what keyHash hashes: a lone surrogate as its code unit in WTF-8", () => {
    // "<length of the class>:" then the key: "0:" and ED A0 80 for U+D800.
    const input = Uint8Array.from([0x30, 0x3a, 0xed, 0xa0, 0x80]);
    assert.equal(
      keyHash(PUBLIC_HASH_KEY, "", "\ud800"),
      sipHashBytes(PUBLIC_HASH_KEY, input, 1, 3),
    );
    assert.equal(utf8Length("\ud800"), 3);
  });
});
