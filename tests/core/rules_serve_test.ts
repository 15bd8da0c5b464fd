// Answering page requests without a network: full answers only with the
// ticket drawn for the requester's address, one paid-for page without.
import { test } from "node:test";
import assert from "node:assert/strict";
import { hashKey } from "../../src/core/hash.ts";
import { Limit } from "../../src/core/limit.ts";
import { Address } from "../../src/proto/mod.ts";
import { PageServer, type RulesSend } from "../../src/core/rules_sync/serve.ts";
import { RuleTable } from "../../src/core/rules_sync/table.ts";
import { decodeRules, NO_TICKET, type Ticket } from "../../src/core/rules_sync/wire.ts";
import { RULES_DATAGRAM_BYTES } from "../../src/core/rules_sync/mod.ts";

const A = Address.parse("192.0.2.1:7946");
const B = Address.parse("192.0.2.2:7946");

function table(): RuleTable {
  const t = new RuleTable(1_000, 3_600_000);
  for (let i = 0; i < 300; i++) {
    const version = { clock: 2 ** 40 + i, origin: { hi: 1, lo: 2 } };
    t.merge(
      { kind: "keyLimit", className: "", key: `k${i}`, value: Limit.perSecond(5), version },
      0,
    );
  }
  return t;
}

function answer(
  server: PageServer,
  to: Address,
  ticket: Ticket,
  sectionBytes: number,
): RulesSend[] {
  const sent: RulesSend[] = [];
  server.request(to, { from: 0, ticket }, sectionBytes);
  server.answer(table(), false, { live: 0, hi: 0, lo: 0 }, (s) => sent.push(s));
  return sent;
}

test("a request without a ticket is answered only when it pays, with one page no larger and no news", () => {
  const server = new PageServer(hashKey(new Uint8Array(16).fill(3)), RULES_DATAGRAM_BYTES);
  assert.deepEqual(answer(server, A, NO_TICKET, 27), []);
  assert.equal(server.unproven, 1);
  const paid = answer(server, A, NO_TICKET, RULES_DATAGRAM_BYTES);
  assert.equal(paid.length, 1);
  assert.ok(paid[0].bare && paid[0].bytes.length < RULES_DATAGRAM_BYTES);
  const page = decodeRules(paid[0].bytes)!.page!;
  assert.ok(page.entries.length > 0);
  assert.deepEqual(page.ticket, server.ticketFor(A));
});

test("with its address's ticket a request gets four pages; another address's ticket gets nothing", () => {
  const server = new PageServer(hashKey(new Uint8Array(16).fill(4)), RULES_DATAGRAM_BYTES);
  const ticket = server.ticketFor(A);
  assert.notDeepEqual(ticket, server.ticketFor(B));
  const full = answer(server, A, ticket, 27);
  assert.equal(full.length, 4);
  assert.ok(full.every((s) => !s.bare && decodeRules(s.bytes)!.page!.entries.length > 0));
  assert.deepEqual(answer(server, B, ticket, 27), []);
  assert.equal(server.unproven, 1);
  // Another member's key draws other tickets: a ticket says nothing elsewhere.
  const other = new PageServer(hashKey(new Uint8Array(16).fill(5)), RULES_DATAGRAM_BYTES);
  assert.notDeepEqual(other.ticketFor(A), ticket);
});
