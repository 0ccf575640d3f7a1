import { createServer } from "node:net";

/** A TCP port on 127.0.0.1 that nobody listens on right now (2024 is taken on these machines). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no free port");
  return address.port;
}
