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
import type { KeyStats } from "../runtime/keystats.ts";
import { KeyLimit } from "../core/key_limit.ts";
import type { Limit } from "../core/limit.ts";
import type { KeyLimitEntry } from "../core/rules.ts";
import { RateguardError } from "../core/errors.ts";
import {
  checkKeyField,
  keyFault,
  object,
  parseKeyLimit,
  parseLimit,
  queryParam,
  readJson,
  requestUrl,
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

/** A class in JSON, its limit in the limit's own JSON form: `""` is the default class. */
type ClassBody = { readonly class: string } & ReturnType<Limit["toJSON"]>;

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
    const url = requestUrl(c.req.url);
    const key = checkKeyField(url.searchParams.get("key") ?? "", "/query/key");
    const className = url.searchParams.get("class") ?? "";
    let k: KeyStats | undefined;
    try {
      k = guard.keyStats(key, { class: className });
    } catch (e) {
      throw keyFault(e, "/query");
    }
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
  app.get("/v1/classes", (c) => c.json({ classes: filtered(c.req.url, classList(guard, state)) }));
  app.put("/v1/classes", async (c) => {
    const url = requestUrl(c.req.url);
    const body = await readJson(c.req.raw);
    if (!url.searchParams.has("class")) {
      const entries = namedLimits(
        body,
        "classes",
        '{"classes": [{"class": "free", "limit": "10/s"}]}',
      );
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
    return c.json({ class: name, ...limit.toJSON() });
  });
  app.delete("/v1/classes", (c) => {
    const name = queryParam(requestUrl(c.req.url), "class");
    if (name === "") throw new BadRequest("the default class cannot be removed", "/query/class");
    if (!guard.removeClass(name)) return problemResponse(404, `no class named ${q(name)}`);
    log.info("class removed", { class: name });
    return c.json({ removed: true });
  });
}

function shadowRoutes(app: Hono, { guard, log }: Admin): void {
  app.get("/v1/shadows", (c) => c.json({ shadows: filtered(c.req.url, shadowList(guard)) }));
  app.put("/v1/shadows", async (c) => {
    const url = requestUrl(c.req.url);
    const body = await readJson(c.req.raw);
    if (!url.searchParams.has("class")) {
      guard.setShadows(
        namedLimits(body, "shadows", '{"shadows": [{"class": "free", "limit": "5/s"}]}'),
      );
      log.info("shadows replaced", { shadows: guard.shadows().length });
      return c.json({ shadows: shadowList(guard) });
    }
    const name = queryParam(url, "class");
    const limit = parseLimit(body);
    guard.setShadow(name, limit);
    log.info("shadow set", { class: name, limit: String(limit) });
    return c.json({ class: name, ...limit.toJSON() });
  });
  app.delete("/v1/shadows", (c) => {
    const name = queryParam(requestUrl(c.req.url), "class", "");
    if (!guard.shadows().some(([n]) => n === name)) {
      return problemResponse(404, `the class ${q(name)} has no shadow`);
    }
    guard.setShadow(name, null);
    log.info("shadow removed", { class: name });
    return c.json({ removed: true });
  });
}

function keyLimitRoutes(app: Hono, { guard, log }: Admin): void {
  app.get("/v1/key-limits", (c) => {
    const url = requestUrl(c.req.url);
    const key = url.searchParams.get("key");
    const all = filtered(c.req.url, guard.keyLimits().map(keyLimitJson));
    return c.json({ keyLimits: key === null ? all : all.filter((e) => e.key === key) });
  });
  app.put("/v1/key-limits", async (c) => {
    const url = requestUrl(c.req.url);
    const body = await readJson(c.req.raw);
    if (!url.searchParams.has("key") && !url.searchParams.has("class")) {
      const shape = '{"keyLimits": [{"class": "pro", "key": "tenant:42", "limit": "2000/s"}]}';
      const seen = new Set<string>();
      const entries = wholeTable(body, "keyLimits", shape).map((e, i): KeyLimitEntry => {
        const at = `/keyLimits/${i}`;
        const o = object(e, shape, at);
        const key = checkKeyField(stringField(o, "key", at), `${at}/key`);
        const className = o.class === undefined ? "" : stringField(o, "class", at);
        once(seen, JSON.stringify([className, key]), "this class and key", at);
        return [knownClass(guard, className, `${at}/class`), key, followed(guard, o, at)];
      });
      try {
        guard.setKeyLimits(entries);
      } catch (e) {
        throw keyFault(e, "/keyLimits");
      }
      log.info("key limits replaced", { keyLimits: entries.length });
      return c.json({ keyLimits: guard.keyLimits().map(keyLimitJson) });
    }
    const className = knownClass(guard, queryParam(url, "class", ""), "/query/class");
    const key = checkKeyField(queryParam(url, "key"), "/query/key");
    const limit = followed(guard, body, "");
    try {
      guard.setKeyLimit(key, limit, { class: className });
    } catch (e) {
      throw keyFault(e, "/query");
    }
    log.info("key limit set", { class: className, key, limit: String(limit) });
    return c.json(keyLimitJson([className, key, limit]));
  });
  app.delete("/v1/key-limits", (c) => {
    const url = requestUrl(c.req.url);
    const className = queryParam(url, "class", "");
    const key = queryParam(url, "key");
    if (!guard.removeKeyLimit(key, { class: className })) {
      return problemResponse(404, `no key limit for ${q(key)} in the class ${q(className)}`);
    }
    log.info("key limit removed", { class: className, key });
    return c.json({ removed: true });
  });
}

/**
 * The body of a `PUT` that replaces a whole table: an object with the
 * array `name`. A body for one item (`{"limit": ...}`) sent without the
 * query that names the item is refused, never read as an empty table.
 */
function wholeTable(body: unknown, name: string, shape: string): unknown[] {
  const o = object(body, shape);
  if (o[name] === undefined && (o.limit !== undefined || o.follows !== undefined)) {
    const item = name === "keyLimits" ? "key" : "class";
    throw new BadRequest(
      `this body sets one item: name it with ?${item}=; to replace the whole table, PUT ${shape}`,
      `/query/${item}`,
    );
  }
  if (!Array.isArray(o[name])) {
    throw new BadRequest(`${name} must be an array like ${shape}`, `/${name}`);
  }
  return o[name] as unknown[];
}

/** A table of classes or shadows, `[{"class", "limit", "burst"?}]`, each class once. */
function namedLimits(body: unknown, name: string, shape: string): Array<readonly [string, Limit]> {
  const seen = new Set<string>();
  return wholeTable(body, name, shape).map((e, i) => {
    const at = `/${name}/${i}`;
    const className = stringField(object(e, shape, at), "class", at);
    once(seen, className, "this class", at);
    return [className, parseLimit(e, at)] as const;
  });
}

/** Refuses an item a bulk body gives twice: which one should win is anyone's guess. */
function once(seen: Set<string>, id: string, what: string, at: string): void {
  if (seen.has(id)) throw new BadRequest(`${what} appears twice in the table`, at);
  seen.add(id);
}

/** A class a key limit is in, or follows: one this instance has, or a 404 `UnknownClass`. */
function knownClass(guard: Guard, name: string, field: string): string {
  if (name === "" || guard.classes().some(([n]) => n === name)) return name;
  throw new RateguardError("UnknownClass", `no class named ${q(name)} on this instance (${field})`);
}

/** A key's limit, whose `follows` names a class this instance has. */
function followed(guard: Guard, body: unknown, at: string): Limit | KeyLimit {
  const limit = parseKeyLimit(body, at);
  if (limit instanceof KeyLimit) knownClass(guard, limit.className, `${at}/follows`);
  return limit;
}

/** The items of a listing in the class `?class=` names, or all of them. */
function filtered<T extends { class: unknown }>(url: string, items: T[]): T[] {
  const name = requestUrl(url).searchParams.get("class");
  return name === null ? items : items.filter((item) => item.class === name);
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
  const named = guard.classes().map(([name, limit]) => ({ class: name, ...limit.toJSON() }));
  return state.defaultLimit === undefined
    ? named
    : [{ class: "", ...state.defaultLimit.toJSON() }, ...named];
}

/** The shadows in force. */
export function shadowList(guard: Guard): ClassBody[] {
  return guard.shadows().map(([name, limit]) => ({ class: name, ...limit.toJSON() }));
}

/** A key limit in JSON: its own limit, or the class it follows. */
export function keyLimitJson(
  [className, key, limit]: KeyLimitEntry,
): { class: string; key: string; [field: string]: unknown } {
  return limit instanceof KeyLimit
    ? { class: className, key, follows: limit.className }
    : { class: className, key, ...limit.toJSON() };
}

function q(text: string): string {
  return JSON.stringify(text);
}
