/**
 * The sidecar's admin routes: classes, key limits, shadows and the dry run,
 * read and changed while the fleet runs. A query parameter names one item
 * (`?class=free`, `?class=pro&key=tenant:42`); without it a `PUT` replaces
 * the whole collection, all or nothing.
 *
 * @module
 */

import type { Hono } from "hono";
import { PROMETHEUS_CONTENT_TYPE, prometheusText } from "../metrics/prometheus.ts";
import type { Guard } from "../runtime/guard.ts";
import { KeyLimit, type Limit } from "../core/limit.ts";
import type { KeyLimitEntry } from "../core/rules.ts";
import {
  arrayField,
  checkKeyField,
  type LimitBody,
  limitBody,
  object,
  parseKeyLimit,
  parseLimit,
  queryParam,
  readJson,
  stringField,
} from "./body.ts";
import type { Logger } from "./log.ts";
import { BadRequest, problemResponse } from "./problem.ts";

/** The paths the admin token guards; each also covers what lies below it. */
export const ADMIN_PATHS: readonly string[] = [
  "/v1/classes",
  "/v1/key-limits",
  "/v1/shadows",
  "/v1/dry-run",
  "/v1/stats",
  "/v1/dashboard",
  "/v1/keys",
  "/metrics",
];

/** What the admin routes keep beside the guard. */
export interface AdminState {
  /** The default class's limit, as last set: the guard does not tell it. */
  defaultLimit: Limit | undefined;
}

/** A class in JSON: `""` is the default class. */
interface ClassBody extends LimitBody {
  readonly class: string;
}

/** Adds the admin routes to `app`. */
export function adminRoutes(app: Hono, guard: Guard, state: AdminState, log: Logger): void {
  const ctx = { guard, state, log };
  classRoutes(app, ctx);
  shadowRoutes(app, ctx);
  keyLimitRoutes(app, ctx);
  dryRunRoutes(app, ctx);
  observeRoutes(app, ctx);
}

/** One key's counters, and the figures for Prometheus. */
function observeRoutes(app: Hono, { guard }: Admin): void {
  app.get("/v1/keys", (c) => {
    const url = new URL(c.req.url);
    const key = checkKeyField(url.searchParams.get("key") ?? "", "/query/key", guard.maxKeyBytes());
    const className = url.searchParams.get("class") ?? "";
    const k = guard.keyStats(key, { class: className });
    if (k === undefined) {
      return problemResponse(
        404,
        `this instance keeps no state for key ${JSON.stringify(key)} of class ${
          JSON.stringify(className)
        }`,
      );
    }
    return c.json({
      ...k,
      limit: String(k.limit),
      shadow: k.shadow === undefined ? null : String(k.shadow),
    });
  });
  app.get(
    "/metrics",
    (c) =>
      c.body(prometheusText(guard.stats(), { guard: guard.address() ?? "standalone" }), 200, {
        "content-type": PROMETHEUS_CONTENT_TYPE,
      }),
  );
}

/** What every admin route works on. */
interface Admin {
  readonly guard: Guard;
  readonly state: AdminState;
  readonly log: Logger;
}

function classRoutes(app: Hono, { guard, state, log }: Admin): void {
  app.get("/v1/classes", (c) => c.json({ classes: classList(guard, state) }));
  app.put("/v1/classes", async (c) => {
    const url = new URL(c.req.url);
    const body = await readJson(c.req.raw);
    if (!url.searchParams.has("class")) {
      const shape = '{"classes": [{"class": "free", "limit": "10/s"}]}';
      const entries = arrayField(body, "classes", shape).map((e, i) => {
        const at = `/classes/${i}`;
        return [stringField(object(e, shape, at), "class", at), parseLimit(e, at)] as const;
      });
      const fallback = entries.find(([name]) => name === "");
      guard.setClasses(entries.filter(([name]) => name !== ""));
      if (fallback) setDefault(guard, state, fallback[1]);
      log.info("classes replaced", { classes: entries.length });
      return c.json({ classes: classList(guard, state) });
    }
    const name = queryParam(url, "class");
    const limit = parseLimit(body);
    if (name === "") setDefault(guard, state, limit);
    else guard.setClass(name, limit);
    log.info("class set", { class: name, limit: String(limit) });
    return c.json({ class: name, ...limitBody(limit) });
  });
  app.delete("/v1/classes", (c) => {
    const name = queryParam(new URL(c.req.url), "class");
    if (name === "") throw new BadRequest("the default class cannot be removed", "/query/class");
    if (!guard.removeClass(name)) return problemResponse(404, `no class named ${q(name)}`);
    log.info("class removed", { class: name });
    return c.json({ removed: true });
  });
}

function shadowRoutes(app: Hono, { guard, log }: Admin): void {
  app.get("/v1/shadows", (c) => c.json({ shadows: shadowList(guard) }));
  app.put("/v1/shadows", async (c) => {
    const url = new URL(c.req.url);
    const body = await readJson(c.req.raw);
    if (!url.searchParams.has("class")) {
      const shape = '{"shadows": [{"class": "free", "limit": "5/s"}]}';
      guard.setShadows(
        arrayField(body, "shadows", shape).map((e, i) => {
          const at = `/shadows/${i}`;
          return [stringField(object(e, shape, at), "class", at), parseLimit(e, at)] as const;
        }),
      );
      log.info("shadows replaced", { shadows: guard.shadows().length });
      return c.json({ shadows: shadowList(guard) });
    }
    const name = queryParam(url, "class");
    const limit = parseLimit(body);
    guard.setShadow(name, limit);
    log.info("shadow set", { class: name, limit: String(limit) });
    return c.json({ class: name, ...limitBody(limit) });
  });
  app.delete("/v1/shadows", (c) => {
    const name = queryParam(new URL(c.req.url), "class", "");
    if (!guard.shadows().some(([n]) => n === name)) {
      return problemResponse(404, `the class ${q(name)} has no shadow`);
    }
    guard.setShadow(name, null);
    log.info("shadow removed", { class: name });
    return c.json({ removed: true });
  });
}

function keyLimitRoutes(app: Hono, { guard, log }: Admin): void {
  app.get("/v1/key-limits", (c) => c.json({ keyLimits: guard.keyLimits().map(keyLimitJson) }));
  app.put("/v1/key-limits", async (c) => {
    const url = new URL(c.req.url);
    const body = await readJson(c.req.raw);
    if (!url.searchParams.has("key")) {
      const shape = '{"keyLimits": [{"class": "pro", "key": "tenant:42", "limit": "2000/s"}]}';
      const entries = arrayField(body, "keyLimits", shape).map((e, i): KeyLimitEntry => {
        const at = `/keyLimits/${i}`;
        const o = object(e, shape, at);
        const key = checkKeyField(stringField(o, "key", at), `${at}/key`, guard.maxKeyBytes());
        return [
          o.class === undefined ? "" : stringField(o, "class", at),
          key,
          parseKeyLimit(o, at),
        ];
      });
      guard.setKeyLimits(entries);
      log.info("key limits replaced", { keyLimits: entries.length });
      return c.json({ keyLimits: guard.keyLimits().map(keyLimitJson) });
    }
    const className = queryParam(url, "class", "");
    const key = checkKeyField(queryParam(url, "key"), "/query/key", guard.maxKeyBytes());
    const limit = parseKeyLimit(body);
    guard.setKeyLimit(className, key, limit);
    log.info("key limit set", { class: className, key, limit: String(limit) });
    return c.json(keyLimitJson([className, key, limit]));
  });
  app.delete("/v1/key-limits", (c) => {
    const url = new URL(c.req.url);
    const className = queryParam(url, "class", "");
    const key = queryParam(url, "key");
    if (!guard.removeKeyLimit(className, key)) {
      return problemResponse(404, `no key limit for ${q(key)} in the class ${q(className)}`);
    }
    log.info("key limit removed", { class: className, key });
    return c.json({ removed: true });
  });
}

function dryRunRoutes(app: Hono, { guard, log }: Admin): void {
  app.get("/v1/dry-run", (c) => c.json({ dryRun: guard.stats().dryRun }));
  app.put("/v1/dry-run", async (c) => {
    const { dryRun } = object(await readJson(c.req.raw), '{"dryRun": true}');
    if (typeof dryRun !== "boolean") throw new BadRequest("dryRun must be a boolean", "/dryRun");
    guard.setDryRun(dryRun);
    log.info(dryRun ? "dry run on" : "dry run off");
    return c.json({ dryRun });
  });
}

function setDefault(guard: Guard, state: AdminState, limit: Limit): void {
  guard.setLimit(limit);
  state.defaultLimit = limit;
}

/** The classes in force, the default first when it is known. */
export function classList(guard: Guard, state: AdminState): ClassBody[] {
  const named = guard.classes().map(([name, limit]) => ({ class: name, ...limitBody(limit) }));
  return state.defaultLimit === undefined
    ? named
    : [{ class: "", ...limitBody(state.defaultLimit) }, ...named];
}

/** The shadows in force. */
export function shadowList(guard: Guard): ClassBody[] {
  return guard.shadows().map(([name, limit]) => ({ class: name, ...limitBody(limit) }));
}

/** A key limit in JSON: its own limit, or the class it follows. */
export function keyLimitJson([className, key, limit]: KeyLimitEntry): Record<string, unknown> {
  return limit instanceof KeyLimit
    ? { class: className, key, follows: limit.className }
    : { class: className, key, ...limitBody(limit) };
}

function q(text: string): string {
  return JSON.stringify(text);
}
