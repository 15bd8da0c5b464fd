/**
 * Reflection through rule transfer: a stranger forges page requests in a
 * live member's name (gossip unsigned, so anyone can). The member named
 * must not be sent more bytes than were sent in its name, however many
 * requests there are; a real transfer still goes at full speed.
 */

import { test } from "node:test";
import assert from "node:assert/strict";
import { Limit } from "../../src/core/limit.ts";
import { encode } from "../../src/proto/mod.ts";
import { RULES_DATAGRAM_BYTES, SectionWriter } from "../../src/core/rules_sync/mod.ts";
import { RulesFleet } from "../../src/sim/faces/rules_fleet.ts";
import { addressOf } from "../../src/sim/driver/names.ts";

const RULES = 2_000;
const REQUESTS = 40;

/** A fleet of five holding `RULES` key limits, settled: the same for the same seed. */
function settled(): RulesFleet {
  const fleet = new RulesFleet({ seed: 41, size: 5 });
  fleet.runUntilConverged(10_000);
  for (let i = 0; i < RULES; i++) fleet.setKeyLimit(0, "", `user:${i}`, Limit.perSecond(1 + i));
  assert.notEqual(fleet.runUntilConverged(60_000), undefined, "the fleet agrees");
  fleet.runUntil(fleet.nowMs + 2_000);
  return fleet;
}

/**
 * A page request in member `victim`'s name, as a forger writes it: the
 * least bytes it takes, or padded as a first request pays for its answer.
 */
function forgedPull(victim: number, from: number, padded = false): Uint8Array {
  const writer = new SectionWriter(padded ? RULES_DATAGRAM_BYTES : 64, false, {
    live: 0,
    hi: 0,
    lo: 0,
  });
  assert.ok(writer.pull(from));
  if (padded) assert.ok(writer.pad());
  const address = addressOf(victim);
  return encode({
    type: "gossip",
    sender: { id: address.id, address, incarnation: 0 },
    records: [],
    rules: writer.finish(),
  });
}

/** Bytes the fleet sends member 1 in `windowMs` with `forged` injected into member 0, less without. */
function reflected(forged: Uint8Array[], windowMs: number): { sent: number; reflected: number } {
  const victim = addressOf(1);
  const [attacked, control] = [settled(), settled()];
  for (const fleet of [attacked, control]) fleet.resetTraffic();
  const atMs = attacked.nowMs;
  for (const bytes of forged) attacked.inject(0, victim, bytes);
  for (const fleet of [attacked, control]) fleet.runUntil(atMs + windowMs);
  const sent = forged.reduce((sum, b) => sum + b.length, 0);
  return {
    sent,
    reflected: attacked.trafficTo(victim).bytes - control.trafficTo(victim).bytes,
  };
}

for (const padded of [false, true]) {
  test(
    `forged page requests in a live member's name${
      padded ? ", padded to pay," : ""
    } get it no more bytes than they took`,
    () => {
      const forged = Array.from(
        { length: REQUESTS },
        (_, i) => forgedPull(1, (i * 50) % RULES, padded),
      );
      const { sent, reflected: got } = reflected(forged, 1_000);
      assert.ok(
        got <= sent,
        `${REQUESTS} forged requests of ${sent} bytes in all got the member named ${got} bytes, ` +
          `${(got / sent).toFixed(2)} times as many`,
      );
    },
  );
}

test("a real transfer still takes four pages a round trip once it holds its ticket", () => {
  const fleet = settled();
  fleet.resetTraffic();
  const late = fleet.add({ seeds: [0] });
  assert.notEqual(fleet.runUntilConverged(10_000), undefined, "the newcomer learned the table");
  assert.equal(fleet.book(late).keyLimits().length, RULES);
  const asked = fleet.traffic(late).datagrams;
  // About 45 bytes a rule, four pages of 1,200 bytes a request: some 20 requests, not 80.
  const pages = Math.ceil((RULES * 45) / 1_200);
  assert.ok(fleet.stats(late)!.rules.transfers >= 1);
  assert.ok(asked < pages, `the newcomer sent ${asked} datagrams for about ${pages} pages`);
  assert.equal(fleet.stats(0)!.rules.unproven, 0, "no real request was refused");
});
