/**
 * The sidecar's routes for what a service does to one key besides checking
 * it: `POST /v1/refund`, `POST /v1/reset` and `POST /v1/block`, each with
 * a check's body (`{"key", "class"?, "cost"?}`) and, for a block, `"ms"`.
 * Like `/v1/check` they need no admin token: they are the service's own
 * request path (give back a failed call's cost, shut out a client that
 * failed its login), not the sidecar's configuration.
 *
 * @module
 */

import type { Hono } from "hono";
import type { Guard } from "../runtime/guard.ts";
import { MAX_BLOCK_MS } from "../core/operations.ts";
import { object, parseCheck, readJson } from "./body.ts";
import { BadRequest } from "./problem.ts";

/** Adds the routes to `app`. */
export function operationRoutes(app: Hono, guard: Guard): void {
  const read = async (req: Request) => {
    const body = await readJson(req);
    return { body, check: parseCheck(body, "", guard.maxKeyBytes()) };
  };
  app.post("/v1/refund", async (c) => {
    const { check } = await read(c.req.raw);
    return c.json({
      refunded: guard.refund(check.key, { class: check.className, cost: check.cost }),
    });
  });
  app.post("/v1/reset", async (c) => {
    const { check } = await read(c.req.raw);
    return c.json({ reset: guard.reset(check.key, { class: check.className }) });
  });
  app.post("/v1/block", async (c) => {
    const { body, check } = await read(c.req.raw);
    const { ms } = object(body, '{"key": "ip:203.0.113.7", "ms": 60000}');
    if (typeof ms !== "number" || !(ms > 0) || !(ms <= MAX_BLOCK_MS)) {
      throw new BadRequest(
        `ms must be a number above 0 and at most ${MAX_BLOCK_MS} (a year)`,
        "/ms",
      );
    }
    return c.json({ blocked: guard.block(check.key, ms, { class: check.className }) });
  });
}
