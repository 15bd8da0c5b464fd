// What a later version adds to a datagram, this one skips and counts: a
// section of an unknown kind, and a rules part of an unknown type (the
// cases of tests/proto/wire_fixtures_test.ts), sent over a real socket to a
// guard in a fleet, read back from stats() and the metrics.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createSocket } from "node:dgram";
import { GossipAuth, Guard } from "../../mod.ts";
import { Address, encode } from "../../src/proto/mod.ts";
import { SectionWriter } from "../../src/core/rules_sync/wire.ts";
import { prometheusText } from "../../src/metrics/mod.ts";

async function until(probe: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function spawn(seeds: string[]): Promise<Guard> {
  return Guard.builder().bind("127.0.0.1:0").gossipAuth(GossipAuth.Off).seeds(seeds)
    .protocolPeriodMs(20).limit(100).fleetRules(true).spawn();
}

/** `bytes` with one more section of kind `kind` at its end. */
function withSection(bytes: Uint8Array, kind: number, body: Uint8Array): Uint8Array {
  return Uint8Array.of(...bytes, kind, body.length >> 8, body.length & 0xff, ...body);
}

describe("a later version's parts of a datagram", { timeout: 60_000 }, () => {
  it("are skipped and counted, in stats() (skippedSections, rules.skippedParts) and rateguard_wire_skipped_total", async () => {
    const a = await spawn([]);
    const b = await spawn([a.address()!]);
    const socket = createSocket("udp4");
    try {
      await until(() => a.clusterSize() === 2 && !b.stats().rules.learning, "b joined");
      assert.deepEqual([a.stats().skippedSections, a.stats().rules.skippedParts], [0, 0]);
      // A gossip in b's name: a rules section with a part of type 99 at its end,
      // then a section of kind 200.
      const header = new SectionWriter(100, false, { live: 0, hi: 0, lo: 0 }).finish();
      const rules = Uint8Array.of(...header, 99, 0, 1, 2);
      const from = Address.parse(b.address()!);
      const sender = { id: from.id, address: from, incarnation: 0 };
      const bytes = withSection(
        encode({ type: "gossip", sender, records: [], rules }),
        200,
        Uint8Array.of(1, 2, 3),
      );
      const to = Address.parse(a.address()!);
      await new Promise((resolve) => socket.send(bytes, to.port, "127.0.0.1", resolve));
      await until(() => a.stats().skippedSections === 1, "a counted the section");
      assert.deepEqual([a.stats().skippedSections, a.stats().rules.skippedParts], [1, 1]);
      assert.equal(a.stats().rejectedDatagrams.malformed, 0, "the datagram was taken");
      const text = prometheusText(a.stats(), { guard: "a" });
      assert.match(text, /^rateguard_wire_skipped_total\{guard="a",part="section"\} 1$/m);
      assert.match(text, /^rateguard_wire_skipped_total\{guard="a",part="rules_part"\} 1$/m);
    } finally {
      socket.close();
      await Promise.all([a.leave(), b.leave()]);
    }
  });
});
