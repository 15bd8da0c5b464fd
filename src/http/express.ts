/**
 * Rate limiting for Express apps (`@rateguard/guard/express`; Express 4 or
 * 5, a peer dependency this subpath alone loads): the same options, fields
 * and answers as the Hono middleware of `@rateguard/guard/hono`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import express from "express";
 * import { Guard } from "@rateguard/guard";
 * import { expressRateLimit } from "@rateguard/guard/express";
 *
 * const guard = await Guard.builder().limit(100).burst(10).spawn();
 * const app = express();
 * app.use(expressRateLimit({ guard, key: (req) => req.get("x-tenant") }));
 * app.get("/", (_req, res) => {
 *   res.send(`${res.locals.rateLimit.decision.remaining} left\n`);
 * });
 * const server = app.listen(0, "127.0.0.1");
 * await new Promise((resolve) => server.once("listening", resolve));
 * const { port } = server.address() as { port: number };
 * const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { "x-tenant": "42" } });
 * assert(res.status === 200 && (await res.text()) === "9 left\n");
 * server.close();
 * ```
 *
 * @module
 */

import type { NextFunction, Request, RequestHandler, Response } from "express";
import {
  addresslessPeer,
  type ClientIpKey,
  clientKeyFunction,
  type ClientKeyOptions,
} from "./client_ip.ts";
import type { FieldSink } from "./fields.ts";
import { problemBody } from "./denial.ts";
import { type LimitingOptions, type RateLimitInfo, RequestLimiter } from "./limiting.ts";

export * from "./common.ts";

/** Options of {@link expressRateLimit}: what every adapter takes, over Express's request and response. */
export interface ExpressRateLimitOptions extends LimitingOptions<[Request, Response]> {
  /**
   * Answers a denial in the app's own style. The response already holds
   * `Retry-After` and the rate limit fields; call `next(err)` to hand the
   * denial to the app's error handler instead.
   *
   * @default {a 429 with an application/problem+json body of type quota-exceeded}
   */
  readonly onDenied?: (
    info: RateLimitInfo,
    req: Request,
    res: Response,
    next: NextFunction,
  ) => void;
}

/**
 * A middleware that limits each request by its key. The fields go on the
 * response before the request goes on (appended, so two limiters share a
 * response), and what was decided is in `res.locals.rateLimit`. A denial
 * is answered with 429, `Retry-After`, the fields and a quota-exceeded
 * problem, or by `onDenied`. An error (of a key function, or a sidecar
 * client set to throw) goes to `next(err)`.
 *
 * @param options What decides, the key of a request, and which fields to send.
 * @returns The middleware, for `app.use`.
 * @throws {TypeError} when `guard` has no `check`, or `key` (or `cost`, `skip`, `onDenied`) is
 *   not a function.
 * @throws {RangeError} when `headers` is not one of its values.
 */
export function expressRateLimit(options: ExpressRateLimitOptions): RequestHandler {
  const limiting = new RequestLimiter<[Request, Response]>(
    options,
    "expressRateLimit",
    2,
  );
  const onDenied = options.onDenied ?? sendProblem;
  if (typeof onDenied !== "function") {
    throw new TypeError("expressRateLimit: onDenied must be a function when given");
  }
  const decided = (
    info: RateLimitInfo | undefined,
    req: Request,
    res: Response,
    next: NextFunction,
  ) => {
    if (info === undefined) return next();
    res.locals.rateLimit = info;
    const allowed = info.decision.allowed;
    if (!allowed || limiting.admissionFields) limiting.write(new ExpressFields(res), info);
    if (allowed) next();
    else onDenied(info, req, res, next);
  };
  return function rateLimitMiddleware(req, res, next) {
    // At once when the key function and the limiter answered at once, with
    // errors to next(err) either way.
    let info;
    try {
      info = limiting.decide(req, res);
    } catch (e) {
      return next(e);
    }
    if (info instanceof Promise) {
      info.then((found) => decided(found, req, res, next)).catch(next);
      return;
    }
    try {
      decided(info, req, res, next);
    } catch (e) {
      next(e);
    }
  };
}

/** An Express response as a place for fields: a list field appended, one that holds a value set. */
class ExpressFields implements FieldSink {
  readonly #res: Response;
  constructor(res: Response) {
    this.#res = res;
  }
  get(name: string): string | null {
    const value = this.#res.getHeader(name);
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : String(value);
  }
  append(name: string, value: string): void {
    this.#res.append(name, value);
  }
  set(name: string, value: string): void {
    this.#res.setHeader(name, value);
  }
}

function sendProblem(info: RateLimitInfo, _req: Request, res: Response): void {
  // end, not send: send would add a charset the problem type does not take.
  res.status(429).setHeader("content-type", "application/problem+json");
  res.end(problemBody(info));
}

/**
 * A key function for {@link expressRateLimit}: the client's address, as
 * `clientIp` of `@rateguard/guard/hono` finds it, from the socket's peer
 * and, with `trustProxy`, `X-Forwarded-For` (or `Forwarded`). It reads
 * them itself, whatever Express's own `trust proxy` setting says. A server
 * listening on a Unix socket (behind nginx, say) needs `trustUnixSocket`;
 * a request whose address cannot be learned is denied with a 429 (or what
 * `unknownClient` says), and counted in the key function's `unknownClients`.
 *
 * @param options The proxies to trust, the header they write, the IPv6 prefix, and what a
 *   request with no address gets.
 * @returns The key function, with its count of requests with no address.
 * @throws {TypeError} when `trustProxy` or `trustUnixSocket` is malformed.
 * @throws {RangeError} when `trustProxy`, `header`, `ipv6Prefix` or `unknownClient` is out of
 *   range.
 */
export function expressClientIp(
  options: ClientKeyOptions<[Request]> = {},
): ClientIpKey<[Request]> {
  return clientKeyFunction<[Request]>(
    options,
    "expressClientIp",
    (find) => (req) =>
      find(req.socket?.remoteAddress ?? addresslessPeer(req.socket), (name) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value.join(", ") : value;
      }),
  );
}
