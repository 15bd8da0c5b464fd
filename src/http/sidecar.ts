/**
 * The sidecar's HTTP API over a {@link Guard}, as a Hono app: services in
 * any language check keys over loopback.
 *
 * @module
 */

import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Guard } from "../runtime/guard.ts";
import type { Decision } from "../core/gcra.ts";
import { BadRequest, problemResponse } from "./problem.ts";

/** The largest request body the sidecar reads. */
export const MAX_BODY_BYTES = 64 * 1024;

/** A check request, as validated. */
interface CheckRequest {
  readonly key: string;
  readonly className: string;
  readonly cost: number;
}

/** A decision as the sidecar returns it; `retryAfterMs` is `null` for "never". */
export interface DecisionBody {
  /** Whether the request is admitted. */
  readonly allowed: boolean;
  /** How many more would be admitted back to back now. */
  readonly remaining: number;
  /** Milliseconds to wait before retrying; 0 when allowed, null if never (cost above the burst). */
  readonly retryAfterMs: number | null;
  /** Milliseconds until the full burst is available again. */
  readonly resetMs: number;
}

/**
 * The sidecar's routes:
 * - `POST /v1/check` `{"key": "tenant:42", "class": "pro", "cost": 1}` →
 *   200 with a {@link DecisionBody}, also when denied;
 * - `GET /v1/stats` → the guard's stats;
 * - `GET /healthz` → 200 while the guard runs.
 *
 * @example
 * ```ts
 * import { Guard } from "@rateguard/guard";
 * import { sidecarApp } from "./sidecar.ts";
 *
 * const app = sidecarApp(await Guard.builder().limit(10).spawn());
 * const res = await app.request("/v1/check", { method: "POST", body: '{"key":"tenant:42"}' });
 * console.assert((await res.json()).allowed === true);
 * ```
 */
export function sidecarApp(guard: Guard): Hono {
  const app = new Hono();
  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => problemResponse(413, `the body is larger than ${MAX_BODY_BYTES} bytes`),
    }),
  );
  app.post("/v1/check", async (c) => {
    const req = parseCheck(await readJson(c.req.raw));
    const decision = guard.checkIn(req.className, req.key, { cost: req.cost });
    return c.json(decisionBody(decision));
  });
  // Key hashes are 64-bit: JSON numbers cannot hold them, so they go as decimal strings.
  app.get(
    "/v1/stats",
    (c) =>
      c.body(
        JSON.stringify(guard.stats(), (_k, v) => typeof v === "bigint" ? v.toString() : v),
        200,
        {
          "content-type": "application/json",
        },
      ),
  );
  app.get("/healthz", (c) => guard.isRunning() ? c.text("ok\n") : c.text("stopped\n", 503));
  app.notFound((c) =>
    problemResponse(404, `no route for ${c.req.method} ${new URL(c.req.url).pathname}`)
  );
  app.onError((err) => {
    if (err instanceof BadRequest) return problemResponse(400, err.message, err.field);
    // A guard method refusing its arguments is a bad request too: the
    // guard validates before it changes anything.
    if (err instanceof TypeError || err instanceof RangeError) {
      return problemResponse(400, err.message);
    }
    return problemResponse(500, "internal error");
  });
  return app;
}

/** The JSON form of a decision. */
export function decisionBody(d: Decision): DecisionBody {
  return {
    allowed: d.allowed,
    remaining: d.remaining,
    retryAfterMs: Number.isFinite(d.retryAfterMs) ? Math.ceil(d.retryAfterMs) : null,
    resetMs: Math.ceil(d.resetMs),
  };
}

async function readJson(req: Request): Promise<unknown> {
  const text = await req.text();
  if (text.trim() === "") throw new BadRequest("the body is empty: expected a JSON object");
  try {
    return JSON.parse(text);
  } catch {
    throw new BadRequest("the body is not valid JSON");
  }
}

function parseCheck(body: unknown): CheckRequest {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new BadRequest('the body must be a JSON object like {"key": "tenant:42"}');
  }
  const { key, class: className = "", cost = 1 } = body as Record<string, unknown>;
  if (typeof key !== "string" || key === "") {
    throw new BadRequest("key must be a non-empty string", "/key");
  }
  if (typeof className !== "string") throw new BadRequest("class must be a string", "/class");
  if (typeof cost !== "number" || !Number.isInteger(cost) || cost < 1 || cost > 4_294_967_295) {
    throw new BadRequest("cost must be a whole number from 1 to 4294967295", "/cost");
  }
  return { key, className, cost };
}
