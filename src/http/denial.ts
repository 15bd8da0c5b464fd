/**
 * What the Hono, Express and fetch adapters answer a denial with: a 429
 * whose body is an `application/problem+json` of the type the RateLimit
 * fields draft registers, naming the policy used up, and whose fields are
 * the decision's (`limiting.ts` writes them).
 *
 * @module
 */

import { retryAfterSeconds } from "./fields.ts";
import { type RateLimitInfo, type RequestLimiter, UNKNOWN_CLIENT_DENIED } from "./limiting.ts";

/** The problem type of a denial, registered by the RateLimit fields draft. */
export const QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

/**
 * The body of a denial: an `application/problem+json` of type
 * quota-exceeded naming the policy it violated.
 *
 * @param info The denial.
 * @returns The body, as JSON text.
 */
export function problemBody(info: RateLimitInfo): string {
  const { policy, decision } = info;
  const wait = Number.isFinite(decision.retryAfterMs)
    ? `retry in ${retryAfterSeconds(decision.retryAfterMs)} s`
    : "this request costs more than the limit ever admits at once";
  return JSON.stringify({
    type: QUOTA_EXCEEDED,
    title: "Request cannot be satisfied as assigned quota has been exceeded",
    status: 429,
    detail: decision === UNKNOWN_CLIENT_DENIED
      ? "the client's address cannot be learned, and requests without one are denied"
      : `the rate limit of policy ${JSON.stringify(policy)} is used up: ${wait}`,
    "violated-policies": [policy],
  });
}

/**
 * The 429 of a denial, with its fields and the problem body.
 *
 * @param info The denial.
 * @param limiting What writes its fields.
 * @returns The response.
 */
export function deniedResponse<A extends unknown[]>(
  info: RateLimitInfo,
  limiting: RequestLimiter<A>,
): Response {
  const headers = new Headers({ "content-type": "application/problem+json" });
  limiting.write(headers, info);
  return new Response(problemBody(info), { status: 429, headers });
}
