import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Fleet } from "../../src/sim/faces/fleet.ts";
import { Limit } from "../../src/core/limit.ts";
import { type AuthConfig, authConfig, GossipAuth, Secret } from "../../src/core/auth.ts";
import {
  decodeReports,
  type DemandGroup,
  encodeReports,
} from "../../src/core/allocation/report.ts";
import { addressOf } from "../../src/sim/faces/fleet.ts";
import { Address, decode, encode, type Message } from "../../src/proto/mod.ts";

const R = 1_000;
const LIMIT = Limit.perSecond(R).burst(50);
const MAX_U32 = 0xffff_ffff;

/** A fleet of 5 at 400/s each, settled, and the last genuine datagram node 1 sent with a report. */
function settledWithCapture(
  seed: number,
  auth?: AuthConfig,
): { fleet: Fleet; genuine: Message; group: DemandGroup } {
  const fleet = new Fleet({ seed, size: 5, limit: LIMIT, auth });
  for (let i = 0; i < 5; i++) fleet.setDemand(i, 400);
  let genuine: Message | undefined;
  let group: DemandGroup | undefined;
  const victim = addressOf(1).id;
  fleet.onSend = (from, bytes) => {
    if (from !== 1) return;
    const decoded = decode(bytes);
    if (!decoded.ok || !decoded.value.extension) return;
    const reports = decodeReports(decoded.value.extension);
    if (!reports.ok) return;
    const own = reports.groups.find((g) =>
      g.origin.hi === victim.hi && g.origin.lo === victim.lo && g.records.length > 0
    );
    if (own) [genuine, group] = [decoded.value, own];
  };
  fleet.runUntil(15_000);
  fleet.onSend = undefined;
  assert.ok(genuine && group, "node 1 sent a report");
  return { fleet, genuine, group };
}

/** The fleet's admitted rate over [fromMs, toMs), in R. */
function rate(fleet: Fleet, fromMs: number, toMs: number): number {
  fleet.runUntil(fromMs);
  for (let i = 0; i < fleet.size; i++) fleet.take(i);
  fleet.runUntil(toMs);
  let admitted = 0;
  for (let i = 0; i < fleet.size; i++) admitted += fleet.take(i).admitted;
  return admitted / R / ((toMs - fromMs) / 1_000);
}

/**
 * One datagram, as a stranger on the network would make it from a capture:
 * node 1's own probe, its incarnation and its report's round raised to the
 * highest there is, made just now, and a demand of 1e9 for the key.
 */
function forge(
  genuine: Message,
  group: DemandGroup,
  change: { life?: number; from?: Message["sender"] } = {},
): Uint8Array {
  const sender = change.from ?? { ...genuine.sender, incarnation: MAX_U32 };
  const report: DemandGroup = {
    ...group,
    origin: sender.id,
    life: change.life ?? group.life,
    round: MAX_U32,
    ageMs: 0,
    records: [{ hash: group.records[0].hash, demand: 1e9 }],
  };
  return encode({
    type: "ping",
    seq: 1,
    sender: { ...sender, ...(change.life ? { life: change.life } : {}) },
    records: [],
    extension: encodeReports([report]),
  });
}

describe("a forged demand report, signing off", () => {
  it("at the highest incarnation and round, Off or Transitional, holds the fleet down for 4 s at most", () => {
    // Transitional takes unsigned datagrams too: the same forgery passes.
    const transitional = authConfig(GossipAuth.Transitional, [new Secret(new Uint8Array(32))]);
    for (const [seed, auth] of [[1], [2], [3, transitional]] as const) {
      const { fleet, genuine, group } = settledWithCapture(seed, auth);
      const bytes = forge(genuine, group);
      assert.ok(bytes.length <= 90, `one small datagram: ${bytes.length} bytes`);
      assert.equal(fleet.inject(0, addressOf(1), bytes), "accepted");
      const during = rate(fleet, 15_000, 16_000);
      // Believed for 15 periods (3 s), then replaced by the next real report.
      const after = rate(fleet, 19_000, 29_000);
      assert.ok(during < 0.9, `seed ${seed}: the forgery bit at first (${during.toFixed(2)} R)`);
      assert.ok(after >= 0.97 && after <= 1.01, `seed ${seed}: back at R: ${after.toFixed(3)} R`);
    }
  });

  it("of a life membership does not know, or of a stranger, moves nothing", () => {
    const { fleet, genuine, group } = settledWithCapture(4);
    const before = rate(fleet, 15_000, 17_000);
    // Another life of node 1 at the highest incarnation: node 1 outbids it
    // and its own word wins; the report of that life is never taken.
    fleet.inject(0, addressOf(1), forge(genuine, group, { life: 12_345 }));
    // A member nobody knows, reporting demand for the key.
    const stranger = Address.parse("192.0.2.7:7946");
    const from = { id: stranger.id, address: stranger, incarnation: MAX_U32, life: 7 };
    fleet.inject(0, stranger, forge(genuine, group, { from }));
    const after = rate(fleet, 17_000, 27_000);
    assert.ok(after >= 0.97, `the fleet keeps admitting R: ${after.toFixed(3)} R`);
    assert.ok(Math.abs(after - before) < 0.03, `${before.toFixed(3)} → ${after.toFixed(3)} R`);
  });
});
