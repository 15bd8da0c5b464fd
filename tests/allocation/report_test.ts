import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  decodeReports,
  type DemandGroup,
  encodeReports,
  groupBytes,
  newerReport,
} from "../../src/core/allocation/report.ts";

const u32 = fc.integer({ min: 0, max: 0xffff_ffff });
const group = fc.record({
  origin: fc.record({ hi: u32, lo: u32 }),
  incarnation: u32,
  round: u32,
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
    assert.equal(decodeReports(new Uint8Array([2, 0])).ok, false, "an unknown version");
    const one = encodeReports([{
      origin: { hi: 1, lo: 2 },
      incarnation: 0,
      round: 3,
      records: [],
    }]);
    const flagged = one.slice();
    flagged[2 + 16] = 1;
    assert.equal(decodeReports(flagged).ok, false, "reserved flags");
    assert.equal(decodeReports(new Uint8Array([...one, 0])).ok, false, "trailing bytes");
    const nan = encodeReports([{
      origin: { hi: 1, lo: 2 },
      incarnation: 0,
      round: 3,
      records: [{ hash: { hi: 0, lo: 0 }, demand: 1 }],
    }]);
    new DataView(nan.buffer).setFloat32(2 + 18 + 8, NaN);
    assert.equal(decodeReports(nan).ok, false, "a NaN demand");
  });

  it("orders reports by incarnation, then round: a replay or a late relay is never newer", () => {
    const at = (incarnation: number, round: number) => ({ incarnation, round });
    assert.ok(newerReport(at(0, 5), at(0, 4)));
    assert.ok(!newerReport(at(0, 4), at(0, 5)));
    assert.ok(!newerReport(at(0, 7), at(0, 7)), "the same report again");
    assert.ok(newerReport(at(1, 0), at(0, 90_000)), "a restarted origin, in a higher incarnation");
    assert.ok(!newerReport(at(0, 90_001), at(1, 3)), "a report from an earlier life");
  });
});
