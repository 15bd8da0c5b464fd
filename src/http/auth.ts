/**
 * Who may call what on the sidecar, by bearer token. Two tokens, each the
 * operator's choice: the admin token guards the admin routes (the rules,
 * the stats); the ops token guards the operations (`/v1/refund`,
 * `/v1/reset`, `/v1/block`), which services call. The rule for the
 * operations, the safest that is still explicit:
 *
 * - with an ops token, they need it or the admin token;
 * - with only an admin token, they need the admin token, unless the
 *   operator opens them in so many words (`opsOpen`, `--ops-open`): an
 *   operator who locks the rules did not mean to leave every key's block
 *   and reset to anyone who reaches the port;
 * - with no token, they are open, as every route is.
 *
 * A call made with the admin token is the operator's; any other is a
 * service's. A checks' route (`/v1/check`, `/v1/peek`) takes no token.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { problemResponse } from "./problem.ts";

/** Who made a call: the operator (the admin token) or a service (anything else let in). */
export type Caller = "operator" | "service";

/** The tokens, each read on each request so that a rotated file takes effect at once. */
export interface Tokens {
  /** The admin token; none: the admin routes are open. */
  readonly adminToken?: () => string | undefined;
  /** The ops token; none: see {@link Tokens.opsOpen}. */
  readonly opsToken?: () => string | undefined;
  /** With an admin token and no ops token, whether the operations take calls with no token. */
  readonly opsOpen?: boolean;
}

/** The token an `Authorization: Bearer <token>` header carries, if it is one. */
function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? "")?.[1];
}

/**
 * Who `authorization` says is calling an operation, or `undefined` when
 * the call is refused (the 401 names what the route needs).
 *
 * @param authorization The request's `Authorization` header.
 * @param tokens The sidecar's tokens.
 * @returns The caller, or `undefined`.
 */
export function opsCaller(authorization: string | undefined, tokens: Tokens): Caller | undefined {
  const given = bearerToken(authorization);
  const admin = tokens.adminToken?.();
  if (admin !== undefined && given !== undefined && sameText(given, admin)) return "operator";
  const ops = tokens.opsToken?.();
  if (ops !== undefined) return given !== undefined && sameText(given, ops) ? "service" : undefined;
  return admin !== undefined && !tokens.opsOpen ? undefined : "service";
}

/** What a refused operation needs, for its 401. */
export function opsRefusal(tokens: Tokens): Response {
  return unauthorized(
    tokens.opsToken?.() !== undefined
      ? "this route needs Authorization: Bearer <the ops token> (or the admin token)"
      : "this route needs Authorization: Bearer <the admin token>, or --ops-open on the sidecar",
  );
}

/** The admin routes' guard: the admin token, when one is set. */
export function adminAuth(token: () => string | undefined): MiddlewareHandler {
  return async (c, next) => {
    const expected = token();
    const given = bearerToken(c.req.header("authorization"));
    if (expected !== undefined && (given === undefined || !sameText(given, expected))) {
      return unauthorized("this admin route needs Authorization: Bearer <the admin token>");
    }
    await next();
  };
}

function unauthorized(detail: string): Response {
  const res = problemResponse(401, detail);
  res.headers.set("www-authenticate", 'Bearer realm="rateguard"');
  return res;
}

/** Compares in time that depends on the lengths only, not on where the texts differ. */
export function sameText(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < x.length; i++) diff |= x[i] ^ (y[i % (y.length || 1)] ?? 0);
  return diff === 0;
}
