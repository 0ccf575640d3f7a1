import type { FastifyInstance } from "fastify";
import type { Fleet } from "../../runs/fleet.js";
import type { Runtime } from "../../runtime.js";
import type { QueueWorker } from "../live-runs/queue-worker.js";
import { EventLoopDelay } from "../protocol/event-loop-delay.js";
import { prometheusText, type QueueMetrics } from "../protocol/metrics-text.js";

/**
 * Operations routes, public like `/ok` (they show no user's data, only this process's counts):
 * - `GET /ok`: the process answers (liveness);
 * - `GET /ready`: the agent store and the checkpoint saver answer within 2 s each (200), else
 *   503 naming the one that did not and why, so a load balancer stops sending it runs;
 * - `GET /metrics`: this process's run counters and gauges in the Prometheus text format, with
 *   its event loop's delay since the previous scrape.
 */
export function healthRoutes(app: FastifyInstance, runtime: Runtime, worker?: QueueWorker): void {
  app.get("/ok", { schema: { hide: true } }, async () => ({ ok: true }));
  app.get("/ready", { schema: { hide: true } }, async (_request, reply) => {
    const readiness = await runtime.health.ready();
    return reply.code(readiness.ready ? 200 : 503).send(readiness);
  });
  const eventLoop = new EventLoopDelay();
  app.addHook("onClose", async () => eventLoop.stop());
  app.get("/metrics", { schema: { hide: true } }, async (_request, reply) => {
    const text = prometheusText(
      await runtime.health.metrics(),
      runtime.fleet ? await queueMetrics(runtime.fleet, worker) : undefined,
      eventLoop.read(),
    );
    return reply.type("text/plain; version=0.0.4; charset=utf-8").send(text);
  });
}

/** The queue's figures for `/metrics`; the shared ones are left out if the store does not answer. */
async function queueMetrics(fleet: Fleet, worker: QueueWorker | undefined): Promise<QueueMetrics> {
  const depth = await fleet.queue.depth().catch(() => undefined);
  return {
    claimed: worker?.counts.claimed ?? 0,
    finished: worker?.counts.finished ?? 0,
    failed: worker?.counts.failed ?? 0,
    active: worker?.active ?? 0,
    queue: depth
      ? {
          pending: depth.pending,
          oldestSeconds: depth.oldestCreatedAt
            ? Math.max(0, (Date.now() - Date.parse(depth.oldestCreatedAt)) / 1000)
            : 0,
        }
      : null,
  };
}
