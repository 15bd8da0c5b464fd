/**
 * The UDP seam: one small interface, three implementations chosen by
 * feature detection: Deno's `Deno.listenDatagram` when the net API is
 * enabled (`--unstable-net`), Bun's `Bun.udpSocket`, and `node:dgram`,
 * which Node has and Deno supports with no flag. Runtimes are told apart
 * through a typed view of `globalThis`, never a bare `Deno` or `Bun`.
 *
 * @module
 */

import { createSocket, type Socket as NodeSocket } from "node:dgram";
import { messageOf } from "../core/errors.ts";
import { formatHostPort } from "../proto/host_port.ts";
import { settledWithin } from "./within.ts";

/** Where a datagram came from. */
export interface Remote {
  /** The IP literal. */
  readonly hostname: string;
  /** The port. */
  readonly port: number;
}

/** What a socket reports: datagrams, and errors it survives. */
export interface SocketHandlers {
  /** A datagram arrived. Must not throw. */
  message(bytes: Uint8Array, from: Remote): void;
  /** A send or receive failed; the socket goes on. Must not throw. */
  error(error: unknown): void;
}

/** A bound UDP socket. */
export interface DatagramSocket {
  /** The port it is bound to (the real one, when 0 was asked for). */
  readonly port: number;
  /** Which implementation runs it, for stats and tests. */
  readonly kind: "deno" | "bun" | "node:dgram";
  /** Sends without waiting; failures go to the `error` handler. */
  send(bytes: Uint8Array, to: Remote): void;
  /**
   * Closes the socket once every send made so far has been handed to the
   * system, or `waitMs` has passed, whichever is first: a goodbye sent
   * just before is not dropped. Nothing is delivered afterwards.
   */
  close(waitMs: number): Promise<void>;
}

/**
 * The sends a runtime has taken but not yet said are out. Deno's
 * `conn.send` and `node:dgram`'s `send` both finish later, and closing
 * the socket first drops what is still queued.
 */
class InFlight {
  readonly #pending = new Set<Promise<void>>();

  /** Tracks one send; the function returned ends it, once out or failed. */
  begin(): () => void {
    let resolve!: () => void;
    const sending = new Promise<void>((r) => (resolve = r));
    this.#pending.add(sending);
    return () => {
      this.#pending.delete(sending);
      resolve();
    };
  }

  /** Settles when nothing is in flight, or after `waitMs`. */
  settled(waitMs: number): Promise<void> {
    return settledWithin(this.#pending, waitMs);
  }
}

interface DenoDatagramConn {
  readonly addr: { port: number };
  receive(): Promise<[Uint8Array, { hostname: string; port: number }]>;
  send(
    bytes: Uint8Array,
    to: { transport: "udp"; hostname: string; port: number },
  ): Promise<number>;
  close(): void;
}
interface BunUdpSocket {
  readonly port: number;
  send(bytes: Uint8Array, port: number, address: string): boolean;
  close(): void;
}
interface BunLike {
  udpSocket(options: {
    hostname: string;
    port: number;
    binaryType: "uint8array";
    socket: {
      data(socket: unknown, bytes: Uint8Array, port: number, address: string): void;
      error?(socket: unknown, error: Error): void;
    };
  }): Promise<BunUdpSocket>;
}
const runtime = globalThis as unknown as {
  Deno?: {
    listenDatagram?: (
      options: { transport: "udp"; hostname: string; port: number },
    ) => DenoDatagramConn;
  };
  Bun?: BunLike;
};

/**
 * Binds a UDP socket at `hostname:port` (an IP literal). Rejects, naming
 * the address, when it cannot (a port in use, an address not on this host).
 */
export async function bindDatagram(
  hostname: string,
  port: number,
  handlers: SocketHandlers,
): Promise<DatagramSocket> {
  const where = formatHostPort(hostname, port);
  try {
    if (typeof runtime.Deno?.listenDatagram === "function") {
      return bindDeno(runtime.Deno.listenDatagram, hostname, port, handlers);
    }
    if (runtime.Bun?.udpSocket) return await bindBun(runtime.Bun, hostname, port, handlers);
    return await bindNode(hostname, port, handlers);
  } catch (e) {
    throw new Error(`cannot bind UDP ${where}: ${messageOf(e)}`, { cause: e });
  }
}

function bindDeno(
  listen: NonNullable<NonNullable<typeof runtime.Deno>["listenDatagram"]>,
  hostname: string,
  port: number,
  handlers: SocketHandlers,
): DatagramSocket {
  const conn = listen({ transport: "udp", hostname, port });
  const inFlight = new InFlight();
  let closed = false;
  const loop = (async () => {
    while (!closed) {
      try {
        const [bytes, from] = await conn.receive();
        handlers.message(bytes, { hostname: from.hostname, port: from.port });
      } catch (e) {
        if (!closed) handlers.error(e);
      }
    }
  })();
  return {
    port: conn.addr.port,
    kind: "deno",
    send: (bytes, to) => {
      const end = inFlight.begin();
      try {
        conn.send(bytes, { transport: "udp", hostname: to.hostname, port: to.port }).then(
          end,
          (e) => {
            end();
            handlers.error(e);
          },
        );
      } catch (e) {
        end();
        handlers.error(e);
      }
    },
    close: async (waitMs) => {
      await inFlight.settled(waitMs);
      closed = true;
      conn.close();
      await loop;
    },
  };
}

async function bindBun(
  bun: BunLike,
  hostname: string,
  port: number,
  handlers: SocketHandlers,
): Promise<DatagramSocket> {
  const socket = await bun.udpSocket({
    hostname,
    port,
    binaryType: "uint8array",
    socket: {
      data: (_s, bytes, fromPort, address) =>
        handlers.message(bytes, { hostname: address, port: fromPort }),
      error: (_s, error) => handlers.error(error),
    },
  });
  return {
    port: socket.port,
    kind: "bun",
    send: (bytes, to) => {
      try {
        socket.send(bytes, to.port, to.hostname);
      } catch (e) {
        handlers.error(e);
      }
    },
    // Bun's send hands the datagram to the system before it returns:
    // nothing is left in flight to wait for.
    close: () => {
      socket.close();
      return Promise.resolve();
    },
  };
}

async function bindNode(
  hostname: string,
  port: number,
  handlers: SocketHandlers,
): Promise<DatagramSocket> {
  const socket: NodeSocket = createSocket({ type: hostname.includes(":") ? "udp6" : "udp4" });
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(port, hostname, () => {
      socket.off("error", reject);
      resolve();
    });
  });
  socket.on("error", (e) => handlers.error(e));
  const inFlight = new InFlight();
  socket.on(
    "message",
    (msg, rinfo) =>
      handlers.message(
        new Uint8Array(msg.buffer, msg.byteOffset, msg.length),
        rinfo.address === undefined
          ? { hostname: "", port: 0 }
          : { hostname: rinfo.address, port: rinfo.port },
      ),
  );
  return {
    port: socket.address().port,
    kind: "node:dgram",
    send: (bytes, to) => {
      // A bad destination throws at once; a send that went out, or failed,
      // says so later.
      const end = inFlight.begin();
      try {
        socket.send(bytes, to.port, to.hostname, (e) => {
          end();
          if (e) handlers.error(e);
        });
      } catch (e) {
        end();
        handlers.error(e);
      }
    },
    close: async (waitMs) => {
      await inFlight.settled(waitMs);
      await new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}
