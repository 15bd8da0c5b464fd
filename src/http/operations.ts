/**
 * The sidecar's routes for what a service does to one key besides checking
 * it: `POST /v1/refund`, `POST /v1/reset` and `POST /v1/block`, each with
 * a check's body (`{"key", "class"?, "cost"?}`) and, for a block, `"ms"`.
 * They are the service's own request path (give back a failed call's
 * cost, shut out a client that failed its login), so they need not take
 * the admin token; who may call them is the operator's choice, made with
 * the tokens (see `auth.ts`).
 *
 * A block made with the admin token is the operator's: a service's reset
 * does not lift it (409 `OperatorBlock`) while it holds; the operator's
 * reset does. Which blocks are the operator's is kept here, in the HTTP
 * layer, in a bounded table ({@link MAX_OPERATOR_BLOCKS}): the guard's
 * blocks carry no origin.
 *
 * @module
 */

import type { Hono } from "hono";
import type { Guard } from "../runtime/guard.ts";
import { MAX_BLOCK_MS } from "../core/enforcer.ts";
import { keyFault, object, parseCheck, readJson } from "./body.ts";
import { type Caller, opsCaller, opsRefusal, type Tokens } from "./auth.ts";
import { BadRequest, problemResponse } from "./problem.ts";

/**
 * The operator's blocks held in force at once, each remembered until it
 * ends: an operator blocks by hand, a few keys, never at a service's
 * pace. One more while the table is full is refused (409
 * `TooManyOperatorBlocks`), never let in unmarked.
 */
export const MAX_OPERATOR_BLOCKS = 1024;

/** Where each operator's block ends, on a monotonic clock (ms), by class and key. */
class OperatorBlocks {
  readonly #untilMs = new Map<string, number>();

  /** Whether the operator's block of the key holds at `nowMs`. */
  holds(id: string, nowMs: number): boolean {
    return (this.#untilMs.get(id) ?? -Infinity) > nowMs;
  }

  /** Whether the key can be marked: it is, or a place is free once the ended blocks go. */
  room(id: string, nowMs: number): boolean {
    if (this.#untilMs.has(id) || this.#untilMs.size < MAX_OPERATOR_BLOCKS) return true;
    for (const [k, until] of this.#untilMs) if (until <= nowMs) this.#untilMs.delete(k);
    return this.#untilMs.size < MAX_OPERATOR_BLOCKS;
  }

  /** Marks a block until `untilMs` (after {@link room}): a longer one of the operator's stays. */
  add(id: string, untilMs: number): void {
    this.#untilMs.set(id, Math.max(untilMs, this.#untilMs.get(id) ?? -Infinity));
  }

  /** Forgets the key's mark. */
  delete(id: string): void {
    this.#untilMs.delete(id);
  }
}

/** Adds the routes to `app`; `tokens` decide who may call them. */
export function operationRoutes(app: Hono, guard: Guard, tokens: Tokens = {}): void {
  const marks = new OperatorBlocks();
  const now = () => performance.now();
  const read = async (req: Request) => {
    const body = await readJson(req);
    return { body, check: parseCheck(body) };
  };
  // The token is looked at before the body is read: a caller let in by
  // none learns nothing of the route but what it needs.
  const caller = (req: Request): Caller | undefined =>
    opsCaller(req.headers.get("authorization") ?? undefined, tokens);
  // The guard checks a key's length, once; keyFault names the field it refused.
  app.post("/v1/refund", async (c) => {
    if (caller(c.req.raw) === undefined) return opsRefusal(tokens);
    const { check } = await read(c.req.raw);
    // A refund never lifts a block (the guard's rule), the operator's included.
    try {
      return c.json({
        refunded: guard.refund(check.key, { class: check.className, cost: check.cost }),
      });
    } catch (e) {
      throw keyFault(e, "");
    }
  });
  app.post("/v1/reset", async (c) => {
    const who = caller(c.req.raw);
    if (who === undefined) return opsRefusal(tokens);
    const { check } = await read(c.req.raw);
    const id = JSON.stringify([check.className, check.key]);
    if (who === "service" && marks.holds(id, now())) {
      const left = guard.keyStats(check.key, { class: check.className })?.blockedForMs ?? 0;
      if (left > 0) {
        return problemResponse(
          409,
          `${JSON.stringify(check.key)} is blocked by the operator for ${
            Math.ceil(left)
          } ms more: only a reset with the admin token lifts it`,
          { code: "OperatorBlock" },
        );
      }
    }
    if (who === "operator") marks.delete(id);
    try {
      return c.json({ reset: guard.reset(check.key, { class: check.className }) });
    } catch (e) {
      throw keyFault(e, "");
    }
  });
  app.post("/v1/block", async (c) => {
    const who = caller(c.req.raw);
    if (who === undefined) return opsRefusal(tokens);
    const { body, check } = await read(c.req.raw);
    const { ms } = object(body, '{"key": "ip:203.0.113.7", "ms": 60000}');
    if (typeof ms !== "number" || !(ms > 0) || !(ms <= MAX_BLOCK_MS)) {
      throw new BadRequest(
        `ms must be a number above 0 and at most ${MAX_BLOCK_MS} (a year)`,
        "/ms",
      );
    }
    const id = JSON.stringify([check.className, check.key]);
    const at = now();
    if (who === "operator" && !marks.room(id, at)) {
      return problemResponse(
        409,
        `${MAX_OPERATOR_BLOCKS} operator's blocks are in force, the most kept: reset one, or block for less`,
        { code: "TooManyOperatorBlocks" },
      );
    }
    let blocked: boolean;
    try {
      blocked = guard.block(check.key, ms, { class: check.className });
    } catch (e) {
      throw keyFault(e, "");
    }
    if (blocked && who === "operator") marks.add(id, at + ms);
    return c.json({ blocked });
  });
}
