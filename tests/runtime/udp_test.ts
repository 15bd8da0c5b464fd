import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { GossipAuth, Guard } from "../../mod.ts";
import {
  fleetAdmitted,
  latest,
  settledRate,
  sleep,
  startFleet,
  startMember,
  stopAll,
  waitForSize,
} from "./fleet_support.ts";

const LIMIT = 300;

describe("a fleet of processes on 127.0.0.1", { timeout: 120_000 }, () => {
  it("shares one limit under even and skewed load", async () => {
    const fleet = await startFleet([300, 300, 300], { limit: LIMIT });
    try {
      await waitForSize(fleet, 3);
      const even = await settledRate(fleet, 4_000, 4_000);
      assert.ok(
        Math.abs(even - LIMIT) <= 0.1 * LIMIT,
        `even load: ${even.toFixed(0)}/s against ${LIMIT}`,
      );
      fleet[0].process.send("rate 500");
      fleet[1].process.send("rate 40");
      fleet[2].process.send("rate 40");
      const skewed = await settledRate(fleet, 4_000, 4_000);
      assert.ok(
        Math.abs(skewed - LIMIT) <= 0.1 * LIMIT,
        `skewed load: ${skewed.toFixed(0)}/s against ${LIMIT}`,
      );
      assert.ok(
        latest(fleet[0])!.share > latest(fleet[1])!.share * 2,
        "the busy member holds the larger share",
      );
    } finally {
      stopAll(fleet);
    }
  });

  it("takes a killed member's share after the suspicion and the hold; a leaver's at once", async () => {
    const fleet = await startFleet([200, 200, 200, 200], { limit: LIMIT });
    try {
      await waitForSize(fleet, 4);
      await sleep(2_000);
      fleet[3].process.child.kill("SIGKILL");
      await waitForSize(fleet.slice(0, 3), 3);
      // Settling takes the hold (2 s in these tests) and a little more.
      const rate = await settledRate(fleet.slice(0, 3), 4_000, 3_000);
      assert.ok(Math.abs(rate - LIMIT) <= 0.1 * LIMIT, `after a kill: ${rate.toFixed(0)}/s`);
      fleet[2].process.send("leave");
      assert.equal(await fleet[2].process.exited(), 0);
      await waitForSize(fleet.slice(0, 2), 2, 3_000);
    } finally {
      stopAll(fleet);
    }
  });

  it("rides out a member stopped for 5 s: it comes back, and the fleet stays within the bursts", async () => {
    const fleet = await startFleet([200, 200, 200], { limit: LIMIT });
    try {
      await waitForSize(fleet, 3);
      await sleep(3_000);
      const t = Date.now();
      // kill(1) rather than child.kill: Deno's child_process does not pass SIGCONT on.
      const pid = String(fleet[2].process.child.pid);
      execFileSync("kill", ["-STOP", pid]);
      await sleep(5_000);
      execFileSync("kill", ["-CONT", pid]);
      await sleep(4_000);
      await waitForSize(fleet, 3);
      for (let s = t; s + 1_000 <= Date.now(); s += 1_000) {
        const second = fleetAdmitted(fleet, s, s + 1_000);
        // The limit, plus a burst (10) on each member, plus the queue a
        // stopped member works through on its way back.
        assert.ok(second <= LIMIT * 1.1 + 3 * 10 + 200, `second at +${s - t} ms: ${second}`);
      }
    } finally {
      stopAll(fleet);
    }
  });

  it("Deno (node:dgram and Deno.listenDatagram), Bun and Node processes form one cluster: the wire is the contract", async () => {
    const fleet = await startFleet([200, 200, 200], {
      limit: LIMIT,
      runtimes: ["deno", "bun", "node"],
    });
    try {
      await waitForSize(fleet, 3);
      const rate = await settledRate(fleet, 4_000, 3_000);
      assert.ok(Math.abs(rate - LIMIT) <= 0.1 * LIMIT, `mixed runtimes: ${rate.toFixed(0)}/s`);
    } finally {
      stopAll(fleet);
    }
  });
});

describe("signed gossip between processes", { timeout: 60_000 }, () => {
  it("a cluster under Required keeps a stranger process out", async () => {
    const secret = btoa("a secret of thirty-two bytes, ok".padEnd(32, "!"));
    const fleet = await startFleet([100, 100], { limit: LIMIT, auth: ["required", secret] });
    try {
      await waitForSize(fleet, 2);
      const stranger = await startMember({ seeds: fleet[0].address, rate: 1_000, limit: LIMIT });
      fleet.push(stranger);
      await sleep(4_000);
      assert.equal(latest(stranger)!.clusterSize, 1, "nobody answered the stranger");
      assert.deepEqual(fleet.slice(0, 2).map((m) => latest(m)!.clusterSize), [2, 2]);
      assert.ok(latest(fleet[0])!.traffic.unsigned > 0, "its datagrams were counted as unsigned");
    } finally {
      stopAll(fleet);
    }
  });
});

describe("spawning a guard in a fleet", () => {
  it("refuses a port in use, naming the address, and an unspecified bind without advertise", async () => {
    const a = await Guard.builder().bind("127.0.0.1:0").gossipAuth(GossipAuth.Off).limit(10)
      .spawn();
    try {
      const taken = a.address()!;
      await assert.rejects(
        Guard.builder().bind(taken).gossipAuth(GossipAuth.Off).limit(10).spawn(),
        (e: Error) => e.message.includes(taken),
      );
      await assert.rejects(
        Guard.builder().bind("0.0.0.0:7946").gossipAuth(GossipAuth.Off).limit(10).spawn(),
        {
          name: "RangeError",
          message: /advertise/,
        },
      );
      assert.throws(() => Guard.builder().bind("localhost:7946"), {
        name: "TypeError",
        message: /localhost/,
      });
      assert.throws(() => Guard.builder().seeds(["nope"]), {
        name: "TypeError",
        message: /"nope"/,
      });
      assert.throws(() => Guard.builder().advertise("0.0.0.0:7946"), RangeError);
      assert.throws(() => Guard.builder().protocolPeriodMs(1), RangeError);
      assert.throws(() => Guard.builder().maxMembers(0), RangeError);
    } finally {
      await a.leave();
    }
    assert.equal(a.isRunning(), false);
  });

  it("gossips over IPv6: two guards on [::1] join and share", async () => {
    const a = await Guard.builder().bind("[::1]:0").gossipAuth(GossipAuth.Off).limit(10)
      .protocolPeriodMs(50).spawn();
    assert.match(a.address()!, /^\[::1\]:\d+$/);
    const b = await Guard.builder().bind("[::1]:0").gossipAuth(GossipAuth.Off).seeds([a.address()!])
      .limit(10)
      .protocolPeriodMs(50)
      .spawn();
    try {
      const deadline = Date.now() + 10_000;
      while ((a.clusterSize() < 2 || b.clusterSize() < 2) && Date.now() < deadline) {
        await sleep(50);
      }
      assert.deepEqual([a.clusterSize(), b.clusterSize()], [2, 2]);
      assert.ok(b.traffic()!.datagramsReceived > 0 && a.traffic()!.datagramsReceived > 0);
      assert.equal(a.traffic()!.socketErrors + b.traffic()!.socketErrors, 0);
    } finally {
      await b.leave();
      await a.leave();
    }
  });

  it("joins through a seed given by name", async () => {
    const a = await Guard.builder().bind("127.0.0.1:0").gossipAuth(GossipAuth.Off).limit(10)
      .protocolPeriodMs(50).spawn();
    const port = a.address()!.split(":")[1];
    const b = await Guard.builder().bind("127.0.0.1:0").gossipAuth(GossipAuth.Off).seeds([
      `localhost:${port}`,
    ]).limit(10)
      .protocolPeriodMs(50)
      .spawn();
    try {
      const deadline = Date.now() + 10_000;
      while (b.clusterSize() < 2 && Date.now() < deadline) await sleep(50);
      assert.equal(b.clusterSize(), 2);
      assert.equal(a.clusterSize(), 2);
    } finally {
      await b.leave();
      await a.leave();
    }
  });
});
