import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Address, MemberId } from "../../src/proto/mod.ts";
import { fnv1a64 } from "../../src/proto/member_id.ts";
import { formatHostPort, splitHostPort } from "../../src/proto/host_port.ts";
import { address } from "./arbitraries.ts";

/** FNV-1a 64 straight from its definition, with bigint arithmetic. */
function fnvReference(bytes: Uint8Array): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffff_ffff_ffff_ffffn;
  return h;
}

describe("Address", () => {
  it("writes IPv4 and IPv6 in canonical form (RFC 5952)", () => {
    const cases: [string, string][] = [
      ["10.0.0.3:7946", "10.0.0.3:7946"],
      ["[2001:DB8:0:0:0:0:0:1]:80", "[2001:db8::1]:80"],
      ["[2001:db8:0:0:1:0:0:1]:1", "[2001:db8::1:0:0:1]:1"],
      ["[2001:db8:0:1:1:1:1:1]:1", "[2001:db8:0:1:1:1:1:1]:1"],
      ["[::]:9", "[::]:9"],
      ["[::1]:9", "[::1]:9"],
      ["[fe80::]:9", "[fe80::]:9"],
      ["[::ffff:192.0.2.1]:53", "192.0.2.1:53"],
      ["[64:ff9b::192.0.2.33]:53", "[64:ff9b::c000:221]:53"],
    ];
    for (const [text, canonical] of cases) assert.equal(Address.parse(text).toString(), canonical);
  });

  it("refuses what is not ip:port, naming it", () => {
    for (
      const text of [
        "10.0.0.1",
        "10.0.0.1:65536",
        "010.0.0.1:1",
        "10.0.0:1",
        "host:7946",
        "[1::2::3]:1",
        "[1:2:3:4:5:6:7:8:9]:1",
        "[1.2.3.4::]:1",
        "::1:80",
        "[::1%eth0]:80",
      ]
    ) {
      assert.throws(
        () => Address.parse(text),
        (e: unknown) => e instanceof TypeError && e.message.includes(text),
      );
    }
    assert.throws(() => Address.of(new Uint8Array(5), 1), RangeError);
    assert.throws(() => Address.of(new Uint8Array(4), 70_000), RangeError);
  });

  it("reads back what it writes, for any address", () => {
    fc.assert(fc.property(address, (a) => {
      const back = Address.parse(a.toString());
      assert.ok(back.equals(a));
      assert.deepEqual(back.bytes, a.bytes);
      assert.equal(back.port, a.port);
    }));
  });

  it("derives its ID as FNV-1a 64 of its canonical bytes", () => {
    const a = Address.parse("10.0.0.1:7946");
    assert.deepEqual(a.bytes, new Uint8Array([4, 10, 0, 0, 1, 0x1f, 0x0a]));
    assert.equal(a.id.toBigInt(), fnvReference(a.bytes));
    assert.ok(a.id.equals(MemberId.fromHex(a.id.toString())));
  });
});

describe("fnv1a64", () => {
  it("matches the published test vectors", () => {
    const hex = (bytes: Uint8Array) => new MemberId(...fnv1a64(bytes)).toString();
    assert.equal(hex(new Uint8Array()), "cbf29ce484222325");
    assert.equal(hex(new TextEncoder().encode("a")), "af63dc4c8601ec8c");
    assert.equal(hex(new TextEncoder().encode("foobar")), "85944171f73967e8");
  });

  it("agrees with a bigint reference on any bytes", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      const [hi, lo] = fnv1a64(bytes);
      assert.equal((BigInt(hi) << 32n) | BigInt(lo), fnvReference(bytes));
    }));
  });
});

describe("host:port, one parser", () => {
  it("an Address carries its host, and its text is the host and port written back", () => {
    const v4 = Address.parse("10.0.0.3:7946");
    const v6 = Address.parse("[2001:DB8::1]:7946");
    assert.deepEqual([v4.host, v6.host], ["10.0.0.3", "2001:db8::1"]);
    for (const a of [v4, v6]) assert.equal(formatHostPort(a.host, a.port), a.toString());
    assert.equal(Address.parse("[::ffff:10.0.0.3]:1").host, "10.0.0.3", "v4-mapped is v4");
  });

  it("splits names and literals alike, and refuses what is neither", () => {
    assert.deepEqual(splitHostPort("rateguard.svc:7946"), {
      host: "rateguard.svc",
      port: 7946,
      bracketed: false,
    });
    assert.deepEqual(splitHostPort("[::1]:0"), { host: "::1", port: 0, bracketed: true });
    for (const bad of ["::1:7946", "host", "host:", "host:65536", "[::1]", "a b:1", "[a]]:1"]) {
      assert.equal(splitHostPort(bad), undefined, bad);
    }
    assert.throws(() => Address.parse("localhost:7946"), TypeError);
  });
});
