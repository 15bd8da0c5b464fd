// Type-checked by `tsc` in a project that installed the packed tarball
// (tests/package/npm_pack.ts), against the package's declarations: each
// subpath's types resolve, and they are real types, not `any` (every
// expected error below must be met, or tsc fails).
import { type Decision, Guard, Limit } from "@rateguard/guard";
import { Address, type FleetStats, MAX_DATAGRAM_BYTES } from "@rateguard/guard/core";
import { Cluster } from "@rateguard/guard/sim";
import { prometheusText } from "@rateguard/guard/metrics";
import { FixedWindowPolicy } from "@rateguard/guard/postgres";
import { rateLimit } from "@rateguard/guard/hono";
import { appendRateLimitFields } from "@rateguard/guard/headers";
import { Client, type ClientDecision } from "@rateguard/guard/client";
import { Hono } from "hono";

export async function consume(): Promise<string> {
  const guard: Guard = await Guard.builder().defaultLimit(Limit.perMinute(60)).spawn();
  const decision: Decision = guard.check("tenant:42", { class: "", cost: 1 });
  const retryAfterMs: number = decision.retryAfterMs;
  // @ts-expect-error a key is a string
  guard.check(42);
  const result = { ok: MAX_DATAGRAM_BYTES > 0 };
  // @ts-expect-error a FleetStats names its rules' figures under `rules`
  const live: number = ({} as FleetStats).rulesLive;
  const address: Address = Address.parse("10.0.0.1:7946");
  const converged: boolean = new Cluster({ seed: 1, size: 3 }).converged();
  const policy = new FixedWindowPolicy({ id: "a", scope: "t", limit: 1, windowMs: 1_000 });
  // @ts-expect-error windowMs is a number
  new FixedWindowPolicy({ id: "a", scope: "t", limit: 1, windowMs: "1s" });
  const app = new Hono();
  app.use("/api/*", rateLimit({ guard, key: (c) => c.req.header("x-tenant") }));
  const headers = new Headers();
  appendRateLimitFields(headers, { policy: "default", limit: Limit.perMinute(60), decision });
  const client = new Client({ url: "http://127.0.0.1:7947" });
  const asked: ClientDecision = await client.check("tenant:42");
  const text: string = prometheusText(guard.stats(), { guard: "consumer" });
  await guard.leave();
  return [retryAfterMs, result.ok, live, address, converged, policy.id, asked.allowed, text].join();
}
