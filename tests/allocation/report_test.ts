import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  decodeReports,
  type DemandGroup,
  encodeReports,
  GROUP_HEADER_BYTES,
  groupBytes,
} from "../../src/core/allocation/report.ts";

const u32 = fc.integer({ min: 0, max: 0xffff_ffff });
const group = fc.record({
  origin: fc.record({ hi: u32, lo: u32 }),
  life: u32,
  round: u32,
  ageMs: u32,
  records: fc.array(
    fc.record({
      hash: fc.record({ hi: u32, lo: u32 }),
      // f32 on the wire: draw values it holds exactly.
      demand: fc.float({ min: 0, max: 1e9, noNaN: true, noDefaultInfinity: true }).map(Math.fround),
    }),
    { maxLength: 64 },
  ),
});

describe("demand reports on the wire", () => {
  it("decode(encode(groups)) gives the groups back", () => {
    fc.assert(fc.property(fc.array(group, { maxLength: 8 }), (groups: DemandGroup[]) => {
      const bytes = encodeReports(groups);
      assert.equal(bytes.length, 2 + groups.reduce((n, g) => n + groupBytes(g.records.length), 0));
      const decoded = decodeReports(bytes);
      assert.ok(decoded.ok);
      // Plain objects on both sides (the generator's have no prototype; a
      // -0 demand travels as 0).
      const plain = (x: unknown) => JSON.parse(JSON.stringify(x));
      assert.deepEqual(plain(decoded.groups), plain(groups));
    }));
  });

  it("never throws on arbitrary or mutated bytes", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 1400 }), (bytes) => {
      const r = decodeReports(bytes);
      assert.equal(typeof r.ok, "boolean");
    }));
    fc.assert(
      fc.property(
        fc.array(group, { minLength: 1, maxLength: 3 }),
        fc.nat(),
        fc.nat(255),
        (groups, at, value) => {
          const bytes = encodeReports(groups);
          bytes[at % bytes.length] = value;
          decodeReports(bytes);
          decodeReports(bytes.subarray(0, at % bytes.length));
        },
      ),
    );
  });

  it("refuses what it cannot vouch for", () => {
    assert.equal(decodeReports(new Uint8Array([3, 0])).ok, false, "an unknown version");
    assert.equal(decodeReports(new Uint8Array([1, 0])).ok, false, "the retired version 1");
    const one = encodeReports([{
      origin: { hi: 1, lo: 2 },
      life: 9,
      round: 3,
      ageMs: 0,
      records: [],
    }]);
    const flagged = one.slice();
    flagged[2 + GROUP_HEADER_BYTES - 2] = 1;
    assert.equal(decodeReports(flagged).ok, false, "reserved flags");
    assert.equal(decodeReports(new Uint8Array([...one, 0])).ok, false, "trailing bytes");
    const nan = encodeReports([{
      origin: { hi: 1, lo: 2 },
      life: 9,
      round: 3,
      ageMs: 0,
      records: [{ hash: { hi: 0, lo: 0 }, demand: 1 }],
    }]);
    new DataView(nan.buffer).setFloat32(2 + GROUP_HEADER_BYTES + 8, NaN);
    assert.equal(decodeReports(nan).ok, false, "a NaN demand");
  });
});
