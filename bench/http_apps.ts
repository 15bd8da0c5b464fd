// The bare endpoint of the HTTP benchmarks, served by bench/http_server.ts
// and called in process by bench/sidecar_bench.ts: a Hono route that
// parses the body and answers the sidecar's JSON with a fixed decision,
// HTTP and JSON alone.
import type { Hono } from "hono";

/** Adds the bare `POST /v1/check` to `app`. */
export function bareCheck(app: Hono): Hono {
  return app.post("/v1/check", async (c) => {
    const { key } = await c.req.json();
    if (typeof key !== "string") return c.json({ detail: "key" }, 400);
    return c.json({ allowed: true, remaining: 49, retryAfterMs: 0, resetMs: 20 });
  });
}
