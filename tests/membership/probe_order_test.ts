import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ProbeOrder, wantedDegree } from "../../src/core/membership/order.ts";
import { member } from "./helpers.ts";
import { Prng } from "../../src/core/prng.ts";

describe("ProbeOrder", () => {
  it("probes every member in round-robin up to 256 members", () => {
    assert.equal(wantedDegree(200), Infinity);
    const members = Array.from({ length: 100 }, (_, i) => member(i + 1));
    const order = new ProbeOrder(new Prng(1), 200, {
      live: () => members,
      known: (m) => m.admitted <= 40,
      provenCount: () => 40,
    });
    const probed = new Set<string>();
    for (let t = 0; t < 100; t++) probed.add(order.next(t * 200)!.key);
    assert.equal(probed.size, 100);
  });

  it("in a thousand, once 3 log2 N are proven, probes those and a stranger every 4 x that many periods", () => {
    // Every member in every round, a thousand spent their first round
    // (200 s) probing strangers through helpers: 6.54 datagrams a node a period.
    const members = Array.from({ length: 999 }, (_, i) => member(i + 1));
    const wanted = wantedDegree(999);
    assert.equal(wanted, 30);
    const order = new ProbeOrder(new Prng(1), 200, {
      live: () => members,
      known: (m) => m.admitted <= 40,
      provenCount: () => 40,
    });
    let strangers = 0;
    const periods = 4 * wanted * 5;
    for (let t = 0; t < periods; t++) {
      if (order.next(t * 200)!.admitted > 40) strangers++;
    }
    assert.ok(strangers >= 5 && strangers <= 6, `${strangers} strangers in ${periods} periods`);
  });
});
