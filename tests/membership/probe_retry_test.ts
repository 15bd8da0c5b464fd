import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/core/membership/config.ts";
import { Prober, type SendFields } from "../../src/core/membership/prober.ts";
import { RoundTrip } from "../../src/core/membership/rtt.ts";
import { member } from "./helpers.ts";
import { Prng } from "../../src/core/prng.ts";

describe("RoundTrip", () => {
  it("waits twice the round trip at least, more when it varies, nothing before a sample", () => {
    const rtt = new RoundTrip(200);
    assert.equal(rtt.retryMs(), undefined);
    rtt.sample(3);
    assert.equal(rtt.retryMs(), 3 + 4 * 1.5);
    for (let i = 0; i < 100; i++) rtt.sample(3);
    assert.ok(Math.abs(rtt.retryMs()! - 6) < 0.01, `${rtt.retryMs()}`);
    for (let i = 0; i < 100; i++) rtt.sample(0);
    assert.equal(rtt.retryMs(), 4, "at least a fiftieth of the period");
  });
});

describe("Prober", () => {
  it("pings again a few round trips after a lost ack, before asking helpers", () => {
    // Two tries a probe (one at start, one with the helpers) left one probe
    // in nine unanswered under 30% loss, a suspicion of the living.
    const sent: { atMs: number; to: string; fields: SendFields }[] = [];
    const target = member(2);
    const helpers = [member(3), member(4), member(5)];
    let nowMs = 0;
    const prober = new Prober(resolveConfig({}), new Prng(1), {
      send: (atMs, to, fields) => sent.push({ atMs, to: to.toString(), fields }),
      look: () => assert.fail("no look here"),
      suspect: () => {},
      live: () => [target],
      proven: () => helpers,
      seeds: () => [],
      newsPending: () => false,
      reachable: () => true,
      helperRank: () => 1,
      provenCount: () => 4,
      dueLook: () => undefined,
    });
    // The first probe is answered in 3 ms: the round trip.
    prober.probeNext(0, 200);
    const first = sent[0].fields as { seq: number };
    nowMs = 3;
    prober.acked(nowMs, first.seq);
    // The next is not: it retries at 3 + 4 · 1.5 = 9 ms, then half as long again.
    sent.length = 0;
    prober.probeNext(200, 400);
    for (nowMs = 200; nowMs < 300; nowMs++) {
      if (prober.nextDeadlineMs() <= nowMs) prober.handleTimeout(nowMs);
    }
    const pings = sent.filter((s) => s.fields.type === "ping" && s.to === target.key);
    assert.deepEqual(
      pings.map((p) => p.atMs),
      [200, 209, 223, 244, 275, 300].slice(0, pings.length),
    );
    assert.ok(pings.length >= 5, `${pings.length} direct pings before the helpers`);
    assert.equal(sent.filter((s) => s.fields.type === "pingReq").length, 0);
  });
});
