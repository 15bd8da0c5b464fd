import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Fleet } from "../../src/sim/mod.ts";
import { Limit } from "../../src/core/limit.ts";

describe("an idle fleet", () => {
  it("does not relay reports that name no key: its probes and acks stay small", () => {
    // Fifty instances, no traffic at all: every report is empty, news to
    // nobody; relayed, a datagram took 1165 bytes; without them, 110.
    const fleet = new Fleet({ seed: 5, size: 50, limit: Limit.perSecond(1_000).burst(50) });
    fleet.runUntil(20_000);
    let datagrams = 0, bytes = 0;
    fleet.onSend = (_from, sent) => {
      datagrams++;
      bytes += sent.length;
    };
    fleet.runUntil(25_000);
    assert.ok(datagrams > 0);
    assert.ok(bytes / datagrams < 200, `${(bytes / datagrams).toFixed(0)} bytes a datagram`);
  });
});
