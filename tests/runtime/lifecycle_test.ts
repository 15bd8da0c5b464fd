import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { start } from "../support/process.ts";
import { GossipTask } from "../../src/runtime/gossip.ts";
import { authConfig } from "../../src/core/auth.ts";
import { FleetNode } from "../../src/core/fleet_node.ts";
import { GossipAuth, Guard } from "../../mod.ts";
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

  it("a guard whose background task dies of a bug holds every key at the floor, and goes on", async () => {
    // The builder's own wiring is under test: a bug in the real node's timer,
    // then what the guard admits. Patched on the prototype, restored after.
    const handleTimeout = FleetNode.prototype.handleTimeout;
    const guard = await Guard.builder().bind("127.0.0.1:0").gossipAuth(GossipAuth.Off)
      .protocolPeriodMs(10).limit(1_000)
      .spawn();
    try {
      guard.check("before");
      const alone = guard.share("before");
      FleetNode.prototype.handleTimeout = function () {
        throw new Error("a bug in the node");
      };
      const deadline = Date.now() + 5_000;
      while (guard.isRunning() && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 10));
      }
      FleetNode.prototype.handleTimeout = handleTimeout;
      assert.equal(guard.isRunning(), false, "the task died");
      guard.check("after");
      const held = guard.share("after");
      assert.ok(alone >= 500, `alone and running, a new key starts at ${alone}/s`);
      assert.ok(held > 0 && held < alone / 2, `after the death it admits ${held}/s, not the floor`);
      assert.equal(guard.check("still").allowed, true, "checks go on");
    } finally {
      FleetNode.prototype.handleTimeout = handleTimeout;
      await guard.leave();
    }
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
