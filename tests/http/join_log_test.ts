import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { JOIN_LOG_AFTER_MS, JOIN_LOG_EVERY_MS, JoinLog } from "../../src/http/join_log.ts";

const WHY = "joining: seed rateguard.svc:7946 has not resolved (3 lookups failed)";

describe("the sidecar's join log", () => {
  it("says a hold once it has lasted, every minute while it lasts, and when it ends", () => {
    const log = new JoinLog();
    const lines = [];
    for (let t = 0; t <= 150_000; t += 1_000) {
      const line = log.observe(t, t < 130_000 ? WHY : "");
      if (line) lines.push([t, line.level, line.message]);
    }
    assert.deepEqual(lines, [
      [JOIN_LOG_AFTER_MS, "warn", WHY],
      [JOIN_LOG_AFTER_MS + JOIN_LOG_EVERY_MS, "warn", WHY],
      [JOIN_LOG_AFTER_MS + 2 * JOIN_LOG_EVERY_MS, "warn", WHY],
      [130_000, "info", "joined"],
    ]);
  });

  it("a guard never held, or held for less than a join takes, says nothing", () => {
    const log = new JoinLog();
    for (let t = 0; t < 10_000; t += 1_000) assert.equal(log.observe(t, ""), undefined);
    for (let t = 10_000; t < 30_000; t += 1_000) {
      assert.equal(log.observe(t, t % 4_000 === 0 ? "" : WHY), undefined, `${t}`);
    }
  });
});
