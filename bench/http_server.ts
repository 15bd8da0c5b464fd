// The two baselines of the HTTP benchmark, as Hono apps answering
// POST /v1/check with the sidecar's JSON:
//   --mode bare    parses the body and answers a fixed decision: HTTP and JSON alone;
//   --mode redis   decides with rate-limiter-flexible's RateLimiterRedis on a
//                  Redis server at 127.0.0.1:$REDIS_PORT, one round trip a request.
// Served on Deno.serve, Bun.serve, or @hono/node-server on Node.
// Prints "listening on http://host:port" once it serves.
import process from "node:process";
import { parseArgs } from "node:util";
import { Hono } from "hono";
import { Redis } from "ioredis";
import { RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { bareCheck } from "./http_apps.ts";

const { values } = parseArgs({ options: { mode: { type: "string" } } });
const app = new Hono();

if (values.mode === "bare") {
  bareCheck(app);
} else if (values.mode === "redis") {
  const redis = new Redis({ port: Number(process.env.REDIS_PORT), enableOfflineQueue: false });
  await new Promise((resolve) => redis.once("ready", resolve));
  const limiter = new RateLimiterRedis({ storeClient: redis, points: 1e9, duration: 1 });
  app.post("/v1/check", async (c) => {
    const { key } = await c.req.json();
    if (typeof key !== "string") return c.json({ detail: "key" }, 400);
    try {
      const r = await limiter.consume(key);
      return c.json({
        allowed: true,
        remaining: r.remainingPoints,
        retryAfterMs: 0,
        resetMs: r.msBeforeNext,
      });
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      return c.json({
        allowed: false,
        remaining: 0,
        retryAfterMs: e.msBeforeNext,
        resetMs: e.msBeforeNext,
      });
    }
  });
} else {
  console.error("--mode bare|redis");
  process.exit(2);
}

// Each runtime's own server as it comes, with none of serveHttp's bounds:
// what a user's bare endpoint costs.
const native = globalThis as unknown as {
  Deno?: {
    serve(
      o: { hostname: string; port: number; onListen: () => void },
      h: typeof app.fetch,
    ): { addr: { port: number } };
  };
  Bun?: { serve(o: { hostname: string; port: number; fetch: typeof app.fetch }): { port: number } };
};
let port: number;
if (native.Deno) {
  port = native.Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch).addr
    .port;
} else if (native.Bun) {
  port = native.Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: app.fetch }).port;
} else {
  const { serve } = await import("@hono/node-server");
  port = await new Promise<number>((resolve) => {
    serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) => resolve(info.port));
  });
}
console.log(`listening on http://127.0.0.1:${port}`);
process.on("SIGTERM", () => process.exit(0));
