import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Slot } from "../../src/core/keytable.ts";
import { Limit } from "../../src/core/limit.ts";
import { ruleOf } from "../../src/core/rule.ts";
import { phaseOf, spreadPhase, watchPhase } from "../../src/core/allocation/phase.ts";
import type { Enforcer } from "../../src/core/enforcer.ts";

// 10 a second, burst 4: one request's interval is 100 ms.
const rule = ruleOf(Limit.perSecond(10).burst(4), undefined, false, 1);
const u = rule.unitsPerRequest;

describe("a slot's shift", () => {
  it("moves the next admission later as far as the burst allows, and no further", () => {
    const slot = new Slot("", "k", rule, 0);
    slot.debt = 3.5 * u; // room for half a request
    slot.atUs = 0;
    assert.equal(slot.shift(0.25, 0), 0.25);
    assert.equal(slot.shift(0.5, 0), 0.25, "only what is left under the burst");
    assert.equal(slot.owed(0), 4 * u);
  });

  it("moves it earlier, never to an empty debt, which would read as a bucket refilled", () => {
    const slot = new Slot("", "k", rule, 0);
    slot.debt = 0.3 * u;
    slot.atUs = 0;
    assert.ok(slot.shift(-0.5, 0) > -0.3);
    assert.equal(slot.owed(0), 1);
    const full = new Slot("", "k", rule, 0);
    assert.equal(full.shift(-0.5, 0), 0, "a full bucket has no grid to move");
  });

  it("leaves a blocked key as it is", () => {
    const slot = new Slot("", "k", rule, 0);
    slot.debt = rule.toleranceUnits;
    slot.atUs = 1_000_000;
    assert.equal(slot.shift(-0.5, 0), 0);
    assert.equal(slot.debt, rule.toleranceUnits);
  });
});

describe("phaseOf", () => {
  it("spreads nodes' offsets over half an interval either way, evenly", () => {
    const key = { hi: 0x1234, lo: 0x5678 };
    const offsets = Array.from(
      { length: 4_000 },
      (_, i) => phaseOf({ hi: i * 7, lo: i }, key).offset,
    );
    assert.ok(offsets.every((x) => x >= -0.5 && x < 0.5));
    // Each tenth of the interval holds about a tenth of the nodes.
    for (let b = 0; b < 10; b++) {
      const inBin = offsets.filter((x) => Math.floor((x + 0.5) * 10) === b).length;
      assert.ok(inBin > 320 && inBin < 480, `tenth ${b}: ${inBin} of 4000`);
    }
  });
});

describe("spreadPhase", () => {
  // What the phase needs of an enforcer, on a time base in ms.
  const enforcer = {
    shiftSlot: (slot: Slot, requests: number, nowMs: number) => slot.shift(requests, nowMs * 1_000),
    slotRefilled: (slot: Slot, nowMs: number) => slot.owed(nowMs * 1_000) === 0,
  } as unknown as Enforcer;
  const key = { hi: 0xabc, lo: 0xdef };

  /** A slot owing `requests`, at time 0. */
  function owing(requests: number): Slot {
    const slot = new Slot("", "k", rule, 0);
    slot.debt = Math.round(requests * u);
    slot.atUs = 0;
    return slot;
  }

  it("moves a key's grid half an interval either way when it runs dry, cancelling out", () => {
    const moves = Array.from({ length: 1_000 }, (_, i) => {
      const slot = owing(1);
      slot.denied = 1; // ran dry since last seen
      spreadPhase(phaseOf({ hi: i * 13, lo: i }, key), slot, enforcer, 0);
      return slot.owed(0) / u - 1;
    });
    assert.ok(moves.every((x) => x >= -0.5 && x < 0.5));
    const mean = moves.reduce((a, b) => a + b) / moves.length;
    assert.ok(Math.abs(mean) < 0.03, `mean move ${mean}`);
  });

  /**
   * What each of `n` nodes owes, beyond the request it has just admitted
   * and the move by its offset that spreads the grids again, after leaving
   * the fair share, its admissions there having found `found`.
   */
  function leaving(n: number, found: number): number[] {
    return leavingMoves(n, found).map(({ owed, offset }) => owed - offset);
  }

  /** What each of `n` nodes owes after leaving the fair share, and its offset. */
  function leavingMoves(n: number, found: number): { owed: number; offset: number }[] {
    return Array.from({ length: n }, (_, i) => {
      const phase = phaseOf({ hi: i * 13, lo: i }, key);
      phase.armed = false; // its grid has moved already
      const slot = owing(1);
      slot.denied = 1; // it ran dry at the fair share: the phase watches from now
      spreadPhase(phase, slot, enforcer, 0, true);
      // An admission at 1 ms that found `found` owed.
      slot.requests = 2;
      slot.debt = Math.round((1 + found) * u);
      slot.atUs = 1_000;
      watchPhase(phase, slot);
      spreadPhase(phase, slot, enforcer, 1, false); // the key leaves the fair share
      return { owed: slot.owed(1_000) / u - 1, offset: phase.offset };
    });
  }

  it("leaving the fair share, spends most of the slack a node's admissions left unspent", () => {
    const owed = leaving(1_000, 0.1);
    const shown = `${Math.min(...owed)} to ${Math.max(...owed)}`;
    assert.ok(owed.every((x) => x >= 0.4 - 1e-6 && x < 0.5), shown);
    assert.ok(Math.max(...owed) - Math.min(...owed) > 0.09, `spread by node: ${shown}`);
  });

  it("leaves a node whose admissions found no slack to spend where it is, but for its offset", () => {
    assert.ok(leaving(100, 0.5).every((x) => Math.abs(x - 0.5) < 1e-6));
  });

  it("leaving the fair share, spreads the grids again by each node's offset", () => {
    // The move to the slack owed is the same rule on every node and lined
    // their grids up: 199 nodes at twice their share spent 10 of 30 s over
    // 1.01 R after a node joined, in step, where spread they spend 2.
    const moves = leavingMoves(1_000, 0.1);
    const owed = moves.map((m) => m.owed);
    const spread = Math.max(...owed) - Math.min(...owed);
    assert.ok(spread > 0.9, `owed from ${Math.min(...owed)} to ${Math.max(...owed)}`);
    const mean = moves.reduce((a, m) => a + m.offset, 0) / moves.length;
    assert.ok(Math.abs(mean) < 0.03, `the moves cancel out: mean offset ${mean}`);
  });

  it("moves the grid no more while it watches a key at the fair share", () => {
    const rearms = (settling: boolean) => {
      const phase = phaseOf({ hi: 3, lo: 4 }, key);
      phase.armed = false; // its grid has moved already
      const slot = owing(1);
      slot.denied = 1;
      spreadPhase(phase, slot, enforcer, 0, settling);
      spreadPhase(phase, slot, enforcer, 200, settling); // refilled at 100 ms, no denial since
      return phase.armed;
    };
    assert.equal(rearms(false), true, "a refilled bucket arms the next move");
    assert.equal(rearms(true), false, "not while watching");
  });

  it("does not count what a burst found before the key ran dry", () => {
    const phase = phaseOf({ hi: 1, lo: 2 }, key);
    phase.armed = false;
    const slot = owing(0); // a burst's first admission found a full bucket
    slot.requests = 1;
    slot.atUs = 1_000;
    slot.debt = u;
    spreadPhase(phase, slot, enforcer, 0, true); // not yet dry: not watched
    watchPhase(phase, slot);
    spreadPhase(phase, slot, enforcer, 1, false);
    assert.equal(slot.owed(1_000), u, "no move");
  });
});
