import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Guard, saltHashKey } from "../../mod.ts";
import { hashKey, keyHash } from "../../src/core/hash.ts";

const salted = (salt: Uint8Array) => Guard.builder().limit(10).keySalt(salt).spawn();

describe("the key salt", () => {
  it("salts of the form X‖X do not collapse into one key: 32 bytes of 7 and of 9 hash apart", async () => {
    const sevens = await salted(new Uint8Array(32).fill(7));
    const nines = await salted(new Uint8Array(32).fill(9));
    assert.notEqual(sevens.keyHashIn("", "tenant:42"), nines.keyHashIn("", "tenant:42"));
  });

  it("every byte counts: salts that differ in one byte hash apart", async () => {
    const a = new Uint8Array(48).fill(1);
    const b = a.slice();
    b[40] ^= 1;
    assert.notEqual(
      (await salted(a)).keyHashIn("", "k"),
      (await salted(b)).keyHashIn("", "k"),
    );
  });

  it("the SipHash key is the first 16 bytes of the salt's SHA-256, as the README says", async () => {
    const salt = Uint8Array.from({ length: 20 }, (_, i) => i * 13);
    const digest = new Uint8Array(createHash("sha256").update(salt).digest());
    const expected = keyHash(hashKey(digest.subarray(0, 16)), "pro", "tenant:42");
    const guard = await Guard.builder().limit(10).class(
      "pro",
      (await import("../../mod.ts")).Limit
        .perSecond(5),
    ).keySalt(salt).spawn();
    assert.equal(guard.keyHashIn("pro", "tenant:42"), expected);
    assert.equal(keyHash(await saltHashKey(salt), "pro", "tenant:42"), expected);
  });

  it("a salt changed after keySalt() does not change the guard's key", async () => {
    const salt = new Uint8Array(16).fill(3);
    const builder = Guard.builder().limit(10).keySalt(salt);
    salt.fill(4);
    assert.equal(
      (await builder.spawn()).keyHashIn("", "k"),
      (await salted(new Uint8Array(16).fill(3))).keyHashIn("", "k"),
    );
  });
});
