/**
 * The sidecar's HTTP API over a {@link Guard}, as a Hono app: services in
 * any language check keys over loopback.
 *
 * @module
 */

import { Hono } from "hono";
import type { Guard } from "../runtime/guard.ts";
import type { Decision } from "../core/decision.ts";
import type { BatchDecision } from "../core/batch.ts";
import type { Limit } from "../core/limit.ts";
import { RateguardError } from "../core/errors.ts";
import {
  checkKeyField,
  keyFault,
  MAX_BODY_BYTES,
  parseBatch,
  parseCheck,
  queryParam,
  readJson,
  requestUrl,
} from "./body.ts";
import { ADMIN_PATHS, adminRoutes, type AdminState } from "./admin.ts";
import { dashboardRoutes } from "./dashboard.ts";
import { operationRoutes } from "./operations.ts";
import { adminAuth } from "./auth.ts";
import { ceilMs } from "./fields.ts";
import { type Logger, silentLogger } from "./log.ts";
import { BadRequest, BodyCut, ContentTooLarge, problemResponse } from "./problem.ts";

export { MAX_BODY_BYTES };

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

/** A batch's decision: the batch's own, and one per item in order. */
export interface BatchDecisionBody extends DecisionBody {
  /** One decision per item; all allowed, or nothing consumed. */
  readonly decisions: readonly DecisionBody[];
}

/** Options of {@link sidecarApp}. */
export interface SidecarOptions {
  /** The default class's limit as configured, so that `GET /v1/classes` can list it. */
  readonly defaultLimit?: Limit;
  /**
   * When set, the admin routes need `Authorization: Bearer <token>`, and so
   * do the operations (refund, reset, block) unless `opsToken` or `opsOpen`
   * says otherwise; read on each request.
   */
  readonly adminToken?: () => string | undefined;
  /**
   * When set, the operations (`/v1/refund`, `/v1/reset`, `/v1/block`) need
   * `Authorization: Bearer` with it or with the admin token; read on each request.
   */
  readonly opsToken?: () => string | undefined;
  /**
   * With an admin token and no ops token, let the operations take calls
   * with no token, as they do on a sidecar with no token at all.
   *
   * @default {false}
   */
  readonly opsOpen?: boolean;
  /** Where changes and failures are logged; silent by default. */
  readonly log?: Logger;
}

/**
 * The sidecar's routes:
 * - `POST /v1/check` `{"key": "tenant:42", "class": "pro", "cost": 1}` →
 *   200 with a {@link DecisionBody}, also when denied;
 * - `POST /v1/check-all` `{"items": [{"key": ..}, ..]}` → all or nothing;
 * - `GET /v1/peek?class=&key=` → what the next check would say;
 * - `POST /v1/refund`, `POST /v1/reset` (a check's body) and `POST /v1/block`
 *   (with `"ms"`) → what a service does to one key besides checking it:
 *   open with no token, else they need `opsToken` or `adminToken` (or
 *   nothing, with `adminToken` alone and `opsOpen`); a block made with the
 *   admin token is the operator's, which only a reset with it lifts;
 * - `GET /healthz`, `GET /readyz` (ready once the guard is not joining: reached a peer, or has no seed but itself;
 *   while joining, a 503 whose text says why, as `guard.joinBlocked()`; when
 *   ready, its body says when the fleet rules are out of step, and why);
 * - `GET /dashboard`, a live page of the fleet, over the admin route `GET /v1/dashboard`;
 * - admin: `GET /v1/stats` and `GET`/`PUT`/`DELETE` under `/v1/classes`,
 *   `/v1/key-limits`, `/v1/shadows`, `/v1/dry-run`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Guard } from "@rateguard/guard";
 * import { sidecarApp } from "./sidecar.ts";
 *
 * const app = sidecarApp(await Guard.builder().limit(10).spawn());
 * const res = await app.request("/v1/check", { method: "POST", body: '{"key":"tenant:42"}' });
 * assert((await res.json()).allowed === true);
 * ```
 */
export function sidecarApp(guard: Guard, options: SidecarOptions = {}): Hono {
  const log = options.log ?? silentLogger;
  const app = new Hono();
  if (options.adminToken) {
    const auth = adminAuth(options.adminToken);
    for (const path of ADMIN_PATHS) app.use(path, auth).use(`${path}/*`, auth);
  }
  // The guard checks a key's length, once; keyFault names the field it refused.
  const check = async (request: Request, bindings: unknown): Promise<Response> => {
    const req = parseCheck(await readJson(request, bindings));
    let decision: Decision;
    try {
      decision = guard.check(req.key, { class: req.className, cost: req.cost });
    } catch (e) {
      throw keyFault(e, "");
    }
    return new Response(JSON.stringify(decisionBody(decision)), JSON_INIT);
  };
  app.post("/v1/check", (c) => check(c.req.raw, c.env));
  app.post("/v1/check-all", async (c) => {
    const items = parseBatch(await readJson(c.req.raw, c.env));
    let batch: BatchDecision;
    try {
      batch = guard.checkAll(items);
    } catch (e) {
      // A key too long, or a pair given twice: the guard says which item.
      throw keyFault(e, "/items");
    }
    const body: BatchDecisionBody = {
      ...decisionBody(batch),
      decisions: batch.decisions.map(decisionBody),
    };
    return c.json(body);
  });
  app.get("/v1/peek", (c) => {
    const url = requestUrl(c.req.url);
    const key = checkKeyField(queryParam(url, "key"), "/query/key");
    try {
      return c.json(decisionBody(guard.peek(key, { class: queryParam(url, "class", "") })));
    } catch (e) {
      throw keyFault(e, "/query");
    }
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
  // Probes come often: readiness reads two flags, never the whole stats
  // (which rank keys); only a guard still joining says why.
  app.get("/readyz", (c) => {
    if (!guard.isRunning()) return c.text("stopped\n", 503);
    if (guard.isJoining()) return c.text(`${guard.joinBlocked() || "joining"}\n`, 503);
    // Still ready: it serves, by the rules it holds. Failing readiness would
    // take out of service every member of a fleet split between two tables.
    const apart = guard.rulesOutOfStep();
    const full = guard.rulesTableFull();
    let body = "ready";
    if (apart !== "") body += `; fleet rules out of step: ${apart}`;
    if (full !== "") body += `; ${full}`;
    return c.text(body + "\n");
  });
  operationRoutes(app, guard, options);
  const state: AdminState = { defaultLimit: options.defaultLimit };
  adminRoutes(app, guard, state, log);
  dashboardRoutes(app, guard, state);
  // The routes above are the one table of paths and their methods: a path
  // it has with another method is a 405 naming those it takes.
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname;
    const allowed = allowedMethods(app, path);
    if (allowed.length === 0) return problemResponse(404, `no route for ${c.req.method} ${path}`);
    const res = problemResponse(
      405,
      `${c.req.method} is not a method of ${path}: it takes ${allowed.join(", ")}`,
    );
    res.headers.set("allow", allowed.join(", "));
    return res;
  });
  app.onError((err, c) => failure(err, c.req.method, c.req.path, log));
  return app;
}

/** The init of every decision's response. */
const JSON_INIT: ResponseInit = { headers: { "content-type": "application/json" } };

/** The answer to a route's error: its problem, or a logged 500. */
function failure(err: Error, method: string, path: string, log: Logger): Response {
  if (err instanceof BadRequest) return problemResponse(400, err.message, { field: err.field });
  if (err instanceof ContentTooLarge) return problemResponse(413, err.message);
  if (err instanceof BodyCut) return problemResponse(408, err.message);
  if (err instanceof RateguardError) {
    // A full rules table is out of room, not a conflict with the request.
    const status = err.code === "UnknownClass" ? 404 : err.code === "RulesFull" ? 507 : 409;
    return problemResponse(status, err.message, { code: err.code });
  }
  // A guard method refusing its arguments is a bad request too: the
  // guard validates before it changes anything.
  if (err instanceof TypeError || err instanceof RangeError) {
    return problemResponse(400, err.message);
  }
  log.warn("internal error", { method, path, error: err.message });
  return problemResponse(500, "internal error");
}

/**
 * The methods `app` routes `path` with, as `Allow` lists them: `HEAD`
 * wherever `GET` is, as Hono answers it with the `GET` route.
 */
function allowedMethods(app: Hono, path: string): string[] {
  const methods = new Set<string>();
  for (const route of app.routes) {
    if (route.path === path && route.method !== "ALL") methods.add(route.method);
  }
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods];
}

/** The JSON form of a decision, in whole milliseconds rounded up. */
function decisionBody(d: Decision): DecisionBody {
  return {
    allowed: d.allowed,
    remaining: d.remaining,
    retryAfterMs: Number.isFinite(d.retryAfterMs) ? ceilMs(d.retryAfterMs) : null,
    resetMs: ceilMs(d.resetMs),
  };
}
