// A leave is heard on every runtime: once a guard has left, its peers hold
// it as left (its share taken at once), never as suspect or dead (a crash,
// its share kept out of use through the suspicion and the hold). Real
// sockets on 127.0.0.1: guards in this process, and sidecar processes told
// to stop by SIGTERM, on each runtime and each of Deno's two UDP APIs.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard } from "../../mod.ts";
import type { RuntimeName } from "../support/process.ts";
import { startSidecar, waitForStderr } from "../http/support.ts";
import { sleep } from "./fleet_support.ts";

/** The sidecars' protocol period (what `startSidecar` gives a fleet sidecar). */
const PERIOD_MS = 50;

/** How `observer` holds the member at `address` now; `undefined` when it holds none. */
function stateOf(observer: Guard, address: string): string | undefined {
  return observer.fleetView().members.find((m) => m.address === address)?.state;
}

/** Waits, at most `timeoutMs`, until every observer holds every address alive. */
async function allHeldAlive(
  observers: readonly Guard[],
  addresses: readonly string[],
  timeoutMs = 30_000,
): Promise<void> {
  const alive = () =>
    observers.every((g) => addresses.every((a) => a === g.address() || stateOf(g, a) === "alive"));
  const deadline = Date.now() + timeoutMs;
  while (!alive() && Date.now() < deadline) await sleep(10);
  assert.ok(alive(), `not every member held alive by every observer: ${addresses}`);
}

/**
 * The first state other than alive each observer holds `address` in,
 * polled until `timeoutMs`; `"alive"` for one that saw no change. Had the
 * goodbye been lost, the first change would be an unanswered probe:
 * suspect, a few periods after the leave.
 */
async function firstStatesAfterAlive(
  observers: readonly Guard[],
  address: string,
  timeoutMs = 40 * PERIOD_MS,
): Promise<(string | undefined)[]> {
  const seen: (string | undefined)[] = observers.map(() => "alive");
  const deadline = Date.now() + timeoutMs;
  while (seen.includes("alive") && Date.now() < deadline) {
    observers.forEach((g, i) => {
      if (seen[i] === "alive") seen[i] = stateOf(g, address);
    });
    await sleep(2);
  }
  return seen;
}

/** Waits, at most ten periods, until every observer shares the limit over `n`. */
async function countedBy(observers: readonly Guard[], n: number): Promise<number[]> {
  const counted = () => observers.map((g) => g.stats().countedSize);
  const deadline = Date.now() + 10 * PERIOD_MS;
  while (counted().some((c) => c !== n) && Date.now() < deadline) await sleep(5);
  return counted();
}

async function spawnGuard(seeds: string[]): Promise<Guard> {
  return await Guard.builder().bind("127.0.0.1:0").seeds(seeds).limit(100)
    .protocolPeriodMs(PERIOD_MS).spawn();
}

/** Two guards in this process that know each other; leave them when done. */
async function twoObservers(): Promise<Guard[]> {
  const a = await spawnGuard([]);
  const observers = [a, await spawnGuard([a.address()!])];
  await allHeldAlive(observers, observers.map((g) => g.address()!));
  return observers;
}

describe("a guard that leaves", { timeout: 120_000 }, () => {
  it("is held as left, not suspect or dead, by every peer (guards in one process)", async () => {
    const observers = await twoObservers();
    const leaver = await spawnGuard([observers[0].address()!]);
    try {
      const address = leaver.address()!;
      await allHeldAlive(observers, [address]);
      await leaver.leave();
      assert.deepEqual(await firstStatesAfterAlive(observers, address), ["left", "left"]);
      // The share is taken at once: no hold, as there is for a crash.
      assert.deepEqual(await countedBy(observers, 2), [2, 2]);
    } finally {
      for (const g of [leaver, ...observers]) await g.leave();
    }
  });

  const runtimes: RuntimeName[] = ["deno", "deno-net", "bun", "node"];
  for (const runtime of runtimes) {
    it(`is heard from a sidecar on ${runtime} stopped by SIGTERM`, async () => {
      const observers = await twoObservers();
      const sidecar = await startSidecar(["--limit", "100", "--seeds", observers[0].address()!], {
        fleet: true,
        runtime,
      });
      try {
        await allHeldAlive(observers, [sidecar.gossip]);
        sidecar.process.child.kill("SIGTERM");
        const seen = await firstStatesAfterAlive(observers, sidecar.gossip);
        await waitForStderr(sidecar.process, /"msg":"stopped"/);
        assert.deepEqual(seen, ["left", "left"], sidecar.process.stderr());
        assert.deepEqual(await countedBy(observers, 2), [2, 2]);
      } finally {
        sidecar.process.kill();
        for (const g of observers) await g.leave();
      }
    });
  }
});
