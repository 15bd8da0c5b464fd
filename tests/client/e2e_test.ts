// End to end: three sidecars in one cluster, on Deno, Bun and Node, driven
// at once by the TypeScript client, the Python client and curl, share one
// limit. Run once per gate, under Node only: it starts every runtime itself.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../src/client/mod.ts";
import { currentRuntime } from "../support/process.ts";
import { eventually, run, type Sidecar, startThreeRuntimes } from "../http/support.ts";

const LIMIT_PER_SEC = 20;
const BURST = 2;
const DRIVE_MS = 2_000;
const KEY = "tenant:shared";

interface Tally {
  allowed: number;
  denied: number;
}

if (currentRuntime === "node") {
  describe("three sidecars, three clients (run on Node only)", () => {
    it("share one limit across the fleet", async () => {
      const flags = ["--limit", String(LIMIT_PER_SEC), "--burst", String(BURST)];
      const fleet: Sidecar[] = await startThreeRuntimes(flags);
      try {
        await eventually(async () => {
          const all = await Promise.all(
            fleet.map(async (s) => (await fetch(`${s.url}/v1/stats`)).json()),
          );
          return all.every((s) => s.clusterSize === 3 && !s.joining && !s.learning);
        }, "a cluster of three");

        const started = Date.now();
        const [ts, py, curl] = await Promise.all([
          driveTs(fleet[0].url),
          drivePython(fleet[1].url),
          driveCurl(fleet[2].url),
        ]);
        const elapsedSec = (Date.now() - started) / 1_000;
        const allowed = ts.allowed + py.allowed + curl.allowed;
        const summary = JSON.stringify({ ts, py, curl, elapsedSec });
        for (const t of [ts, py, curl]) assert.ok(t.allowed > 0 && t.denied > 0, summary);
        // One limit: the fleet admits its rate plus a burst on each member
        // (a margin for shares moving while demand is learnt). Three
        // separate limits would admit three times the rate.
        const bound = 1.2 * LIMIT_PER_SEC * elapsedSec + fleet.length * BURST;
        assert.ok(allowed <= bound, `admitted ${allowed} > ${bound.toFixed(1)}: ${summary}`);
        assert.ok(bound < 3 * LIMIT_PER_SEC * elapsedSec, summary);
        // And the whole of it: every member wants more than its share, so
        // the fleet admits about the rate, not a floor or a member's slice.
        const least = 0.5 * LIMIT_PER_SEC * elapsedSec;
        assert.ok(allowed >= least, `admitted ${allowed} < ${least.toFixed(1)}: ${summary}`);
      } finally {
        for (const s of fleet) s.process.kill();
      }
    });
  });
}

async function driveTs(url: string): Promise<Tally> {
  const client = new Client({ url, timeoutMs: 1_000, onFailure: "throw" });
  const tally = { allowed: 0, denied: 0 };
  for (const end = Date.now() + DRIVE_MS; Date.now() < end;) {
    const d = await client.check(KEY);
    d.allowed ? tally.allowed++ : tally.denied++;
  }
  return tally;
}

async function drivePython(url: string): Promise<Tally> {
  const script = `
import json, sys, time
sys.path.insert(0, "sdk/python")
from rateguard_client import Client
client = Client(sys.argv[1], timeout=1.0, on_failure="raise")
tally = {"allowed": 0, "denied": 0}
end = time.monotonic() + ${DRIVE_MS / 1_000}
while time.monotonic() < end:
    tally["allowed" if client.check("${KEY}") else "denied"] += 1
print(json.dumps(tally))
`;
  const { code, output } = await run("python3", ["-c", script, url], {
    PYTHONDONTWRITEBYTECODE: "1",
  });
  assert.equal(code, 0, output);
  return JSON.parse(output.trim().split("\n").pop()!) as Tally;
}

async function driveCurl(url: string): Promise<Tally> {
  // Batches of 20 requests over one kept-alive connection per curl run.
  const urls = Array(20).fill(`${url}/v1/check`).join(" ");
  const script = `end=$(( $(date +%s%N) + ${DRIVE_MS} * 1000000 ))
while [ "$(date +%s%N)" -lt "$end" ]; do
  curl -sS --max-time 5 -X POST -H 'content-type: application/json' -d '{"key": "${KEY}"}' ${urls}
  echo
done`;
  const { code, output } = await run("bash", ["-c", script]);
  assert.equal(code, 0, output);
  return {
    allowed: output.split('"allowed":true').length - 1,
    denied: output.split('"allowed":false').length - 1,
  };
}
