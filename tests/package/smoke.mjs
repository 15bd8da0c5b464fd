// Run inside a project that installed the packed tarball (tests/package/npm_pack.ts),
// by plain Node, Bun or Deno: imports each subpath of @rateguard/guard by its
// package name and uses it. `bare` takes the subpaths that need no peer
// dependency; `full` all of them. Prints one line, `ok <subpaths>`.
import assert from "node:assert/strict";
import process from "node:process";

const mode = process.argv[2];
assert.ok(mode === "bare" || mode === "full", `usage: smoke.mjs bare|full, got ${mode}`);
const passed = [];

const { Guard, Limit } = await import("@rateguard/guard");
const guard = await Guard.builder().defaultLimit(Limit.perMinute(60).burst(2)).spawn();
assert.equal(guard.check("tenant:42").allowed, true);
assert.equal(guard.check("tenant:42").allowed, true);
const denied = guard.check("tenant:42");
assert.equal(denied.allowed, false);
assert.ok(denied.retryAfterMs > 0);
passed.push(".");

const core = await import("@rateguard/guard/core");
const book = new core.LimitBook(core.Limit.perSecond(1_000), {
  maxClasses: core.GUARD_BOUNDS.maxClasses.default,
  maxKeyLimits: core.GUARD_BOUNDS.maxKeyLimits.default,
});
const node = new core.FleetNode({
  address: core.Address.parse("10.0.0.3:7946"),
  book,
  enforcer: new core.Enforcer(book, {
    capacity: 2 * core.GUARD_BOUNDS.trackedKeys.default,
    overflowScale: core.COLD_FRACTION,
    fleet: { hashKey: core.PUBLIC_HASH_KEY },
  }),
  policy: core.PartitionPolicy.holdDown(),
  seeds: ["10.0.0.1:7946"],
  membership: { seed: 42 },
});
node.handleTimeout(0);
const join = node.pollTransmit();
assert.equal(join?.to.toString(), "10.0.0.1:7946");
assert.ok(join.bytes.length > 0 && join.bytes.length <= core.MAX_DATAGRAM_BYTES);
assert.equal(core.decode, undefined, "the wire codec is the node's own (./core's budget)");
passed.push("./core");

const { Cluster } = await import("@rateguard/guard/sim");
const cluster = new Cluster({ seed: 7, size: 3 });
cluster.runUntil(3_000);
assert.ok(cluster.converged());
passed.push("./sim");

const { appendRateLimitFields, retryAfterSeconds } = await import("@rateguard/guard/headers");
const headers = new Headers();
appendRateLimitFields(headers, {
  policy: "default",
  limit: Limit.perMinute(60).burst(2),
  decision: denied,
});
assert.equal(headers.get("RateLimit-Policy"), '"default";q=60;w=60');
assert.equal(headers.get("Retry-After"), String(retryAfterSeconds(denied.retryAfterMs)));
passed.push("./headers");

const { withRateLimit } = await import("@rateguard/guard/fetch");
const limited = withRateLimit(
  { guard, key: (request) => request.headers.get("x-tenant") ?? undefined },
  () => new Response("served\n"),
);
const served = await limited(new Request("http://localhost/", { headers: { "x-tenant": "f" } }));
assert.equal(served.status, 200);
assert.notEqual(served.headers.get("RateLimit"), null);
passed.push("./fetch");

const { Client } = await import("@rateguard/guard/client");
// No sidecar on port 9: the failure policy decides, and says why.
const client = new Client({ url: "http://127.0.0.1:9", timeoutMs: 2_000, onFailure: "closed" });
const failed = await client.check("tenant:42");
assert.equal(failed.allowed, false);
assert.equal(failed.failure?.name, "ClientUnavailableError");
passed.push("./client");

if (mode === "full") {
  const { prometheusText, registerMetrics } = await import("@rateguard/guard/metrics");
  registerMetrics(guard).unregister();
  assert.match(prometheusText(guard.stats(), { guard: "smoke" }), /^# HELP /);
  passed.push("./metrics");

  const { FixedWindowPolicy, KeyHasher, migrationSql } = await import("@rateguard/guard/postgres");
  const policy = new FixedWindowPolicy({ id: "api", scope: "tenant", limit: 10, windowMs: 1_000 });
  const hasher = await KeyHasher.fromSecret(crypto.getRandomValues(new Uint8Array(32)));
  assert.equal((await hasher.hashFor(policy, "tenant:42")).length, 32);
  assert.match(migrationSql("quotas"), /rateguard_check_v1/);
  passed.push("./postgres");

  const { Hono } = await import("hono");
  const { rateLimit } = await import("@rateguard/guard/hono");
  const app = new Hono();
  app.use("/api/*", rateLimit({ guard, key: (c) => c.req.header("x-tenant") }));
  app.get("/api/hello", (c) => c.text("hello\n"));
  const ok = await app.request("/api/hello", { headers: { "x-tenant": "7" } });
  assert.equal(ok.status, 200);
  assert.notEqual(ok.headers.get("RateLimit"), null);
  await app.request("/api/hello", { headers: { "x-tenant": "7" } });
  const refused = await app.request("/api/hello", { headers: { "x-tenant": "7" } });
  assert.equal(refused.status, 429);
  assert.ok(Number(refused.headers.get("Retry-After")) > 0);
  passed.push("./hono");

  const { default: express } = await import("express");
  const { expressRateLimit } = await import("@rateguard/guard/express");
  const web = express();
  web.use(expressRateLimit({ guard, key: (req) => req.get("x-tenant") }));
  web.get("/", (_req, res) => void res.send("served\n"));
  const server = web.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${server.address().port}/`, {
      headers: { "x-tenant": "e" },
    });
    assert.equal(res.status, 200);
    assert.notEqual(res.headers.get("RateLimit"), null);
  } finally {
    server.close();
    server.closeAllConnections?.();
  }
  passed.push("./express");

  // The sidecar's module, imported, starts nothing: only run as the main
  // module, or by its main(), does it listen (the rateguard command calls it).
  const cli = await import("@rateguard/guard/cli");
  assert.equal(typeof cli.main, "function");
  passed.push("./cli");
}
await guard.leave();
console.log(`ok ${passed.join(" ")}`);
