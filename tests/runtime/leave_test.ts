// A leave is heard on every runtime: once a guard has left, its peers hold
// it as left (its share taken at once), not as crashed (suspect, then dead:
// its share kept out of use through the suspicion and the hold). Real
// sockets on 127.0.0.1: guards in this process, and sidecar processes told
// to stop by SIGTERM, on each runtime and each of Deno's two UDP APIs.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { GossipAuth, Guard } from "../../mod.ts";
import type { RuntimeName } from "../support/process.ts";
import { eventually, startSidecar, waitForStderr } from "../http/support.ts";
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
 * How each observer holds `address` once it has settled on left or dead,
 * polled for at most ten periods: the least time a suspicion takes to end
 * in dead, so a crash cannot be declared within the wait. A suspicion may
 * come first (a probe unanswered on a loaded machine, or sent as the
 * leaver stopped listening); what a lost goodbye shows is no "left" at all.
 */
async function settledStates(
  observers: readonly Guard[],
  address: string,
): Promise<(string | undefined)[]> {
  const settled = () =>
    observers.map((g) => stateOf(g, address)).every((s) => s === "left" || s === "dead");
  const deadline = Date.now() + 10 * PERIOD_MS;
  while (!settled() && Date.now() < deadline) await sleep(2);
  return observers.map((g) => stateOf(g, address));
}

/** Waits, at most ten periods, until every observer shares the limit over `n`. */
async function countedBy(observers: readonly Guard[], n: number): Promise<number[]> {
  const counted = () => observers.map((g) => g.stats().countedSize);
  const deadline = Date.now() + 10 * PERIOD_MS;
  while (counted().some((c) => c !== n) && Date.now() < deadline) await sleep(5);
  return counted();
}

async function spawnGuard(seeds: string[]): Promise<Guard> {
  return await Guard.builder().bind("127.0.0.1:0").gossipAuth(GossipAuth.Off).seeds(seeds).limit(
    100,
  )
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
  it("is held as left, not as crashed, by every peer (guards in one process)", async () => {
    const observers = await twoObservers();
    const leaver = await spawnGuard([observers[0].address()!]);
    try {
      const address = leaver.address()!;
      // The leaver too holds the others alive: its goodbye goes to those it holds.
      const all = [...observers, leaver];
      await allHeldAlive(all, all.map((g) => g.address()!));
      await leaver.leave();
      assert.deepEqual(await settledStates(observers, address), ["left", "left"]);
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
        // And it holds them: its goodbye goes to the members it holds, and
        // a sidecar signalled before its join was answered would tell nobody.
        await eventually(async () => {
          const s = await (await fetch(`${sidecar.url}/v1/stats`)).json();
          return s.clusterSize === 3 && s.suspects === 0 && s.joining === false;
        }, "the sidecar to hold both observers");
        sidecar.process.child.kill("SIGTERM");
        const seen = await settledStates(observers, sidecar.gossip);
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
