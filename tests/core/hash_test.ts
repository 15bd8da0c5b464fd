import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { hashKey, keyHash, PUBLIC_HASH_KEY, sipHashBytes } from "../../src/core/hash.ts";

const seq = (n: number) => Uint8Array.from({ length: n }, (_, i) => i);

describe("SipHash", () => {
  it("matches the published SipHash-2-4 vectors (key 00..0f)", () => {
    const key = hashKey(seq(16));
    // From the SipHash paper's appendix and its reference vectors.
    assert.equal(sipHashBytes(key, seq(0), 2, 4), 0x726fdb47dd0e0e31n);
    assert.equal(sipHashBytes(key, seq(15), 2, 4), 0xa129ca6149be45e5n);
  });

  it("hashes class and key apart, and by the key it is given", () => {
    const salted = hashKey(Uint8Array.from({ length: 16 }, (_, i) => 255 - i));
    assert.notEqual(keyHash(PUBLIC_HASH_KEY, "a", "bc"), keyHash(PUBLIC_HASH_KEY, "ab", "c"));
    assert.notEqual(keyHash(PUBLIC_HASH_KEY, "", "k"), keyHash(salted, "", "k"));
    assert.equal(keyHash(salted, "pro", "tenant:42"), keyHash(salted, "pro", "tenant:42"));
    // Non-ASCII keys hash by their UTF-8, surrogate pairs included.
    assert.notEqual(keyHash(PUBLIC_HASH_KEY, "", "é"), keyHash(PUBLIC_HASH_KEY, "", "e"));
    assert.notEqual(keyHash(PUBLIC_HASH_KEY, "", "😀"), keyHash(PUBLIC_HASH_KEY, "", "😁"));
    const long = "x".repeat(10_000);
    assert.equal(keyHash(PUBLIC_HASH_KEY, "", long), keyHash(PUBLIC_HASH_KEY, "", long));
    assert.throws(() => hashKey(new Uint8Array(8)), RangeError);
  });

  it("spreads keys: 100k keys, no collision, bits balanced", () => {
    const seen = new Set<bigint>();
    let ones = 0;
    for (let i = 0; i < 100_000; i++) {
      const h = keyHash(PUBLIC_HASH_KEY, "", `ip:${i}`);
      seen.add(h);
      ones += Number(h & 1n) + Number((h >> 63n) & 1n);
    }
    assert.equal(seen.size, 100_000);
    assert.ok(Math.abs(ones / 200_000 - 0.5) < 0.01, `bit balance ${ones / 200_000}`);
  });
});
