// Real processes: three sidecars with --fleet-rules on Deno, Bun and Node;
// a key limit set and then removed on the Deno sidecar through its admin
// route is seen by the Bun and Node sidecars, and so is a block. Run under Node only: it
// starts every runtime itself.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { currentRuntime } from "../support/process.ts";
import { eventually, type Sidecar, startThreeRuntimes } from "./support.ts";

type KeyLimitJson = { class: string; key: string; limit: string };

async function keyLimits(s: Sidecar): Promise<KeyLimitJson[]> {
  return ((await (await fetch(`${s.url}/v1/key-limits`)).json()) as { keyLimits: KeyLimitJson[] })
    .keyLimits;
}

async function post(s: Sidecar, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, path);
  return await res.json() as Record<string, unknown>;
}

async function rulesOf(
  s: Sidecar,
): Promise<{ digest: string; version: number; learning: boolean }> {
  return ((await (await fetch(`${s.url}/v1/stats`)).json()) as { rules: never }).rules;
}

if (currentRuntime === "node") {
  describe("fleet rules across three runtimes (run on Node only)", () => {
    it("a key limit and a block set on the Deno sidecar apply on the Bun and Node sidecars", async () => {
      const flags = ["--limit", "100/s", "--fleet-rules"];
      const fleet = await startThreeRuntimes(flags);
      try {
        await eventually(async () => {
          const all = await Promise.all(
            fleet.map(async (s) => (await fetch(`${s.url}/v1/stats`)).json()),
          );
          return all.every((s) => s.clusterSize === 3 && !s.joining && !s.rules.learning);
        }, "a cluster of three that has learned the rules");

        const put = await fetch(`${fleet[0].url}/v1/key-limits?class=&key=tenant:7`, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ limit: "5/s" }),
        });
        assert.equal(put.status, 200, await put.text());
        await eventually(async () => {
          const all = await Promise.all(fleet.map(keyLimits));
          return all.every((l) => l.some((e) => e.key === "tenant:7" && e.limit === "5/s"));
        }, "the key limit on every sidecar");
        const rules = await Promise.all(fleet.map(rulesOf));
        assert.equal(new Set(rules.map((r) => r.digest)).size, 1, JSON.stringify(rules));
        assert.ok(rules.every((r) => r.version > 0), JSON.stringify(rules));

        const del = await fetch(`${fleet[0].url}/v1/key-limits?class=&key=tenant:7`, {
          method: "DELETE",
        });
        assert.equal(del.status, 200, await del.text());
        await eventually(async () => {
          const all = await Promise.all(fleet.map(keyLimits));
          return all.every((l) => !l.some((e) => e.key === "tenant:7"));
        }, "the removal on every sidecar");

        const block = await post(fleet[0], "/v1/block", { key: "ip:203.0.113.9", ms: 600_000 });
        assert.deepEqual(block, { blocked: true });
        await eventually(async () => {
          const all = await Promise.all(
            fleet.map((s) => post(s, "/v1/check", { key: "ip:203.0.113.9" })),
          );
          return all.every((d) => d.allowed === false && Number(d.retryAfterMs) > 500_000);
        }, "the block on every sidecar");
      } finally {
        for (const s of fleet) s.process.kill();
      }
    });
  });
}
