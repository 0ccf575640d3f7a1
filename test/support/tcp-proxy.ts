import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy on 127.0.0.1 in front of a server, which a test can cut (every open connection
 * destroyed, new ones refused) and restore on the same port: to a browser this is the network
 * or the server going away mid-stream and coming back, while the server and its runs go on.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** The proxy's base URL (listening on a free port the first time). */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Whether it accepts connections (not cut). */
  get listening(): boolean {
    return this.server !== undefined;
  }

  /** Starts accepting connections (on the same port as before, after a cut). */
  async listen(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
        socket.on("error", () => socket.destroy());
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    const address = server.address();
    if (address && typeof address === "object") this.port = address.port;
    this.server = server;
  }

  /** Destroys every open connection and refuses new ones until {@link listen} is called again. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
