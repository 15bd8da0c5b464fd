import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { inspect } from "node:util";
import {
  authConfig,
  GossipAuth,
  judge,
  parseGossipAuth,
  seal,
  Secret,
} from "../../src/core/auth.ts";
import { hmacSha256, sha256, syncMac } from "../../src/sim/faces/hmac.ts";
import { webCryptoMac } from "../../src/runtime/hmac.ts";
import { Address, encode } from "../../src/proto/mod.ts";

const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const a = new Secret(new Uint8Array(32).fill(1));
const b = new Secret(new Uint8Array(32).fill(2));
const message = () => {
  const address = Address.parse("10.0.0.1:7946");
  return encode({
    type: "gossip",
    sender: { id: address.id, address, incarnation: 1 },
    records: [],
  });
};

describe("HMAC-SHA256", () => {
  it("matches the published vectors, and Web Crypto", async () => {
    assert.equal(
      hex(sha256(ascii("abc"))),
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    assert.equal(
      hex(sha256(new Uint8Array(0))),
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
    // RFC 4231, test case 2.
    assert.equal(
      hex(hmacSha256(ascii("Jefe"), ascii("what do ya want for nothing?"))),
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
    for (const n of [0, 1, 55, 56, 64, 200, 1400]) {
      const data = Uint8Array.from({ length: n }, (_, i) => (i * 31) & 255);
      assert.equal(hex(syncMac(a, data)), hex(await webCryptoMac(a, data)), `length ${n}`);
    }
  });
});

describe("Secret", () => {
  it("is at least 32 bytes and never shows itself", () => {
    assert.throws(() => new Secret(new Uint8Array(31)), { name: "RangeError", message: /32/ });
    assert.throws(() => new Secret("x".repeat(40) as unknown as Uint8Array), TypeError);
    const s = new Secret(ascii("a very secret value of 32 bytes!"));
    for (
      const shown of [
        String(s),
        JSON.stringify({ s }),
        inspect(s),
        inspect({ nested: s }),
        `${[s]}`,
      ]
    ) {
      assert.ok(!shown.includes("very secret"), shown);
    }
    assert.ok(s.equals(new Secret(ascii("a very secret value of 32 bytes!"))));
    assert.ok(!s.equals(a));
  });
});

describe("signing by mode", () => {
  it("Off sends unsigned and takes anything; Transitional and Required sign", () => {
    const off = authConfig(GossipAuth.Off);
    const sealedOff = seal(off, message(), syncMac) as Uint8Array;
    assert.deepEqual(sealedOff, message());
    const signed = seal(authConfig(GossipAuth.Required, [a]), message(), syncMac) as Uint8Array;
    assert.equal(signed.length, message().length + 16);
    assert.deepEqual(judge(off, signed, syncMac), { accept: true, bytes: signed });
  });

  it("Required drops unsigned and bad tags; either of two secrets verifies", () => {
    const required = authConfig(GossipAuth.Required, [b, a]);
    const byA = seal(authConfig(GossipAuth.Required, [a]), message(), syncMac) as Uint8Array;
    const byC = seal(
      authConfig(GossipAuth.Required, [new Secret(new Uint8Array(32))]),
      message(),
      syncMac,
    ) as Uint8Array;
    assert.equal((judge(required, byA, syncMac) as { accept: boolean }).accept, true);
    assert.deepEqual(judge(required, byC, syncMac), { accept: false, reason: "badTag" });
    assert.deepEqual(judge(required, message(), syncMac), { accept: false, reason: "unsigned" });
    const flipped = byA.slice();
    flipped[5] ^= 1;
    assert.deepEqual(judge(required, flipped, syncMac), { accept: false, reason: "badTag" });
    const transitional = authConfig(GossipAuth.Transitional, [a]);
    assert.equal((judge(transitional, message(), syncMac) as { accept: boolean }).accept, true);
    assert.deepEqual(judge(transitional, byC, syncMac), { accept: false, reason: "badTag" });
  });

  it("the same verdicts with Web Crypto's asynchronous MAC", async () => {
    const required = authConfig(GossipAuth.Required, [a]);
    const signed = await seal(required, message(), webCryptoMac);
    assert.equal((await judge(required, signed, webCryptoMac)).accept, true);
    assert.deepEqual(await judge(authConfig(GossipAuth.Required, [b]), signed, webCryptoMac), {
      accept: false,
      reason: "badTag",
    });
  });

  it("refuses bad configurations", () => {
    assert.throws(() => authConfig(GossipAuth.Required), {
      name: "RangeError",
      message: /needs a secret/,
    });
    assert.throws(() => authConfig(GossipAuth.Required, [a, b, a]), {
      name: "RangeError",
      message: /at most two/,
    });
    assert.throws(() => authConfig("strict" as "off"), { name: "TypeError", message: /"strict"/ });
    assert.equal(parseGossipAuth(" Transitional "), "transitional");
    assert.throws(() => parseGossipAuth("on"), { name: "TypeError", message: /"on"/ });
  });
});
