import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { start } from "../support/process.ts";
import { GossipTask } from "../../src/runtime/gossip.ts";
import { authConfig } from "../../src/core/auth.ts";
import type { FleetNode } from "../../src/core/fleet_node.ts";
import { Address } from "../../src/proto/mod.ts";

describe("a guard's lifecycle", () => {
  for (const how of ["leave", "dispose"]) {
    it(`the process exits by itself once the guard has left (${how})`, async () => {
      const p = start("tests/support/leave_and_exit.ts", how === "dispose" ? ["--dispose"] : []);
      try {
        assert.equal(await p.exited(15_000), 0, p.stderr());
        assert.match(p.stdout(), /left/);
      } finally {
        p.kill();
      }
    });
  }

  it("a background task that dies of a bug says so, and the host process goes on", async () => {
    let died: unknown;
    let failed = false;
    let ticks = 0;
    const node = {
      address: Address.parse("127.0.0.1:1"),
      handleTimeout() {
        if (++ticks === 3) throw new Error("a bug in the node");
      },
      pollTransmit: () => undefined,
      pollResolve: () => undefined,
      fail() {
        failed = true;
      },
      leave() {},
    } as unknown as FleetNode;
    const task = await startTask(node, (e) => {
      died = e;
      node.fail(0);
    });
    const deadline = Date.now() + 5_000;
    while (task.running && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(task.running, false);
    assert.match(String(died), /a bug in the node/);
    assert.equal(failed, true, "the node was told to hold every key at the floor");
    await task.leave();
  });

  it("a socket error is counted, never thrown", async () => {
    let sent = false;
    const node = {
      address: Address.parse("127.0.0.1:1"),
      handleTimeout() {},
      // A datagram to port 0 cannot be sent: the socket reports an error.
      pollTransmit: () =>
        sent
          ? undefined
          : (sent = true, { to: Address.parse("127.0.0.1:0"), bytes: new Uint8Array(8) }),
      pollResolve: () => undefined,
      fail() {},
      leave() {},
    } as unknown as FleetNode;
    const task = await startTask(node, () => {});
    const deadline = Date.now() + 3_000;
    while (task.counters().socketErrors === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(task.running, true);
    assert.ok(task.counters().socketErrors >= 1, "the failed send was counted");
    await task.leave();
  });
});

/** A background task on loopback around a stand-in node, ticking every 5 ms. */
function startTask(node: FleetNode, onDeath: (e: unknown) => void): Promise<GossipTask> {
  return GossipTask.start({
    bindHost: "127.0.0.1",
    bindPort: 0,
    makeNode: () => node,
    clock: () => performance.now(),
    protocolPeriodMs: 20,
    onDeath,
    auth: authConfig("off"),
  });
}
