/**
 * The sidecar's dashboard: `GET /dashboard` is one page, script and all
 * served from the sidecar, that polls `GET /v1/dashboard` once a second.
 * The page holds no data, so it needs no token; the data is an admin route,
 * behind the admin token when one is set, which the page asks for once and
 * keeps in the tab's session storage.
 *
 * @module
 */

import type { Hono } from "hono";
import type { Guard } from "../runtime/guard.ts";
import { type AdminState, classList, keyLimitJson, shadowList } from "./admin.ts";
import { DashboardFeed } from "./dashboard_feed.ts";
import { DASHBOARD_HTML, DASHBOARD_SCRIPT } from "./dashboard_page.ts";

/** Nothing but the sidecar itself: no outside asset, no inline script, no framing. */
const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

/**
 * Adds `GET /dashboard`, its script, and the data at `GET /v1/dashboard`.
 *
 * @param app The sidecar's app.
 * @param guard The guard shown.
 * @param state What the admin routes keep beside it (the default class's limit).
 * @returns The feed, sampling only while the data is asked for.
 */
export function dashboardRoutes(app: Hono, guard: Guard, state: AdminState): DashboardFeed {
  const feed = new DashboardFeed(guard, () => ({
    classes: classList(guard, state),
    keyLimits: guard.keyLimits().map(keyLimitJson),
    shadows: shadowList(guard),
  }));
  const page = {
    "content-security-policy": PAGE_POLICY,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  };
  app.get("/dashboard", (c) => c.html(DASHBOARD_HTML, 200, page));
  app.get(
    "/dashboard/app.js",
    (c) => c.body(DASHBOARD_SCRIPT, 200, { ...page, "content-type": "text/javascript" }),
  );
  app.get("/v1/dashboard", (c) =>
    c.body(feed.current(), 200, {
      "content-type": "application/json",
      "cache-control": "no-store",
    }));
  return feed;
}
