/**
 * Rate limiting for `fetch`-style handlers, such as `Deno.serve`'s and
 * `Bun.serve`'s (`@rateguard/guard/fetch`): the same options, fields and
 * answers as the Hono middleware of `@rateguard/guard/hono`, with no
 * framework at all.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Guard } from "@rateguard/guard";
 * import { withRateLimit } from "@rateguard/guard/fetch";
 *
 * const guard = await Guard.builder().limit(1).burst(1).spawn();
 * const handler = withRateLimit(
 *   { guard, key: (request) => request.headers.get("x-tenant") ?? undefined },
 *   (_request, _info, limited) => new Response(`${limited?.decision.remaining} left\n`),
 * );
 * // Deno.serve(handler), or Bun.serve({ fetch: handler })
 * const ask = () => handler(new Request("http://localhost/", { headers: { "x-tenant": "7" } }));
 * assert((await (await ask()).text()) === "0 left\n");
 * assert((await ask()).status === 429);
 * ```
 *
 * @module
 */

import {
  addresslessPeer,
  type ClientIpKey,
  clientKeyFunction,
  type ClientKeyOptions,
} from "./client_ip.ts";
import { deniedResponse } from "./denial.ts";
import { type LimitingOptions, type RateLimitInfo, RequestLimiter } from "./limiting.ts";

export * from "./common.ts";

/** Options of {@link withRateLimit}: what every adapter takes, over the request and the server's info. */
export interface FetchRateLimitOptions<I = unknown> extends LimitingOptions<[Request, I]> {
  /**
   * Answers a denial in the app's own style.
   *
   * @default {the 429 it is given: Retry-After, the fields and a quota-exceeded problem}
   */
  readonly onDenied?: (
    info: RateLimitInfo,
    response: Response,
    request: Request,
  ) => Response | Promise<Response>;
}

/**
 * Wraps a handler so that each request is limited by its key: an admitted
 * one is handed on with what was decided as the third argument, and its
 * response gets the rate limit fields (a response with immutable headers,
 * such as one from `fetch`, is copied once); a denied one is answered with
 * 429, `Retry-After`, the fields and a quota-exceeded problem, or by
 * `onDenied`.
 *
 * @param options What decides, the key of a request, and which fields to send.
 * @param handler The handler to limit.
 * @returns The limited handler, for `Deno.serve` or `Bun.serve`'s `fetch`: it answers a
 *   response, or a promise of one where the key function, the limiter or the handler answered one.
 * @throws {TypeError} when `guard` has no `check`, or `key` (or `cost`, `skip`, `onDenied`,
 *   `handler`) is not a function.
 * @throws {RangeError} when `headers` is not one of its values.
 */
export function withRateLimit<I = unknown>(
  options: FetchRateLimitOptions<I>,
  handler: (
    request: Request,
    info: I,
    rateLimit: RateLimitInfo | undefined,
  ) => Response | Promise<Response>,
): (request: Request, info?: I) => Response | Promise<Response> {
  const limiting = new RequestLimiter<[Request, I]>(
    options,
    "withRateLimit",
    2,
  );
  const onDenied = options.onDenied ?? ((_info, response) => response);
  if (typeof onDenied !== "function" || typeof handler !== "function") {
    throw new TypeError("withRateLimit: onDenied and handler must be functions");
  }
  /** The fields on an admitted response: a response with immutable headers is copied once. */
  const withFields = (response: Response, decided: RateLimitInfo): Response => {
    if (!limiting.admissionFields) return response;
    try {
      limiting.write(response.headers, decided);
    } catch (e) {
      // Immutable headers (a response from fetch, Response.redirect): the
      // first write is the one that throws, so nothing was half written.
      if (!(e instanceof TypeError)) throw e;
      response = new Response(response.body, response);
      limiting.write(response.headers, decided);
    }
    return response;
  };
  const respond = (
    decided: RateLimitInfo | undefined,
    request: Request,
    info: I,
  ): Response | Promise<Response> => {
    if (decided === undefined) return handler(request, info, undefined);
    if (!decided.decision.allowed) {
      return onDenied(decided, deniedResponse(decided, limiting), request);
    }
    const response = handler(request, info, decided);
    if (response instanceof Promise) return response.then((r) => withFields(r, decided));
    return withFields(response, decided);
  };
  // A synchronous key function, guard and handler answer with no promise:
  // the native servers write a response they are handed at once sooner
  // than one they must await. Whatever throws on the way is a rejected
  // promise, as from an async function, so a caller's catch sees it.
  return (request, served) => {
    const info = served as I; // Deno.serve and Bun.serve always pass it
    try {
      const decided = limiting.decide(request, info);
      if (decided instanceof Promise) return decided.then((d) => respond(d, request, info));
      return respond(decided, request, info);
    } catch (e) {
      return Promise.reject(e);
    }
  };
}

/** Options of {@link fetchClientIp}. */
export interface FetchClientIpOptions<I = unknown> extends ClientKeyOptions<[Request, I]> {
  /**
   * The peer's address, from the request and the server's info: `undefined`
   * for a Unix socket, which has none, `""` for a peer that is gone.
   *
   * @default {Deno.serve's info.remoteAddr.hostname, or Bun.serve's server.requestIP(request)}
   */
  readonly peer?: (request: Request, info: I) => string | undefined;
}

/**
 * A key function for {@link withRateLimit}: the client's address, as
 * `clientIp` of `@rateguard/guard/hono` finds it, from the peer (what
 * `Deno.serve` and `Bun.serve` hand the handler tells it) and, with
 * `trustProxy`, `X-Forwarded-For` (or `Forwarded`). Served on a Unix socket
 * (`Deno.serve({ path })`, `Bun.serve({ unix })`) behind a proxy, set
 * `trustUnixSocket`; a request whose address cannot be learned is denied
 * with a 429 (or what `unknownClient` says), and counted in the key
 * function's `unknownClients`.
 *
 * @param options The peer, the proxies to trust, the header they write, the IPv6 prefix, and
 *   what a request with no address gets.
 * @returns The key function, with its count of requests with no address.
 * @throws {TypeError} when `trustProxy` or `trustUnixSocket` is malformed.
 * @throws {RangeError} when `trustProxy`, `header`, `ipv6Prefix` or `unknownClient` is out of
 *   range.
 */
export function fetchClientIp<I = unknown>(
  options: FetchClientIpOptions<I> = {},
): ClientIpKey<[Request, I]> {
  const peer = options.peer ?? servedPeer;
  return clientKeyFunction<[Request, I]>(
    options,
    "fetchClientIp",
    (find) => (request, info) => find(peer(request, info), (name) => request.headers.get(name)),
  );
}

/** The peer as Deno.serve (its info) or Bun.serve (its server) tells it. */
function servedPeer(request: Request, info: unknown): string | undefined {
  const served = info as {
    remoteAddr?: { hostname?: string };
    requestIP?: (r: Request) => { address?: string } | null;
  } | undefined;
  if (typeof served?.remoteAddr?.hostname === "string") return served.remoteAddr.hostname;
  if (typeof served?.requestIP === "function") {
    const address = served.requestIP(request)?.address;
    if (address !== undefined) return address;
  }
  return addresslessPeer(info);
}
