import type { Scenario, TargetCheck } from "../lib/scenario.js";
import { median, percentile } from "../lib/stats.js";
import {
  type Delivery,
  fanOut,
  legacyRun,
  type Protocol,
  v2Run,
} from "../lib/streaming-clients.js";
import { type StreamTarget, startStreamServers } from "../lib/streaming-servers.js";
import { fmt, int, ratio, type Table } from "../lib/table.js";
import { rotated } from "../lib/timing.js";
import { DELEGATE, startTokenModel } from "../lib/token-model-server.js";

/** Every model call's wait before its first chunk, as the load scenario's model. */
const LATENCY_MS = 50;
/** Tokens of the answer whose first token is timed. */
const TTFT_TOKENS = 20;
/** Subscribers of one run in the fan-out. */
const SUBSCRIBERS = 8;

type ServerName = "ours" | "dev";
const SERVERS: readonly ServerName[] = ["ours", "dev"];
const PROTOCOLS: readonly Protocol[] = ["legacy", "v2"];
const SERVER_LABEL: Record<ServerName, string> = { ours: "ours", dev: "dev server" };

interface Cell {
  server: ServerName;
  protocol: Protocol;
}
const CELLS: readonly Cell[] = SERVERS.flatMap((server) =>
  PROTOCOLS.map((protocol) => ({ server, protocol })),
);
const cellName = (cell: Cell) => `${cell.server}-${cell.protocol}`;

/** One fan-out run: what the 8 subscribers got. */
interface FanRun {
  /** Start request → the last subscriber's end of the run, ms. */
  wallMs: number;
  /** Events received, per subscriber. */
  events: number[];
  /** Text tokens received, per subscriber. */
  tokens: number[];
  /** Σ events ÷ wall. */
  eventsPerSecond: number;
  /** Σ tokens ÷ wall. */
  tokensPerSecond: number;
  /** First subscriber's end → last's, ms. */
  spreadMs: number;
  /** Start request → the main agent's first token, the slowest subscriber, ms. */
  firstTokenMs: number;
  /** Start request → the last token, the slowest subscriber, ms. */
  lastTokenMs: number;
  /**
   * Tokens per second of the main agent's answer (its first to its last token) at each
   * subscriber, summed over the subscribers: the delivery rate while tokens flow, without the
   * run's start and end.
   */
  answerTokensPerSecond: number;
}

interface CellResult extends Cell {
  /** Why the cell could not be measured (undefined: it was). */
  unavailable?: string;
  firstTokenMs: number[];
  fan: FanRun[];
  failures: string[];
}

/**
 * The streaming scenario: streaming to clients, ours (`subagent-graph serve`, SQLite) against the
 * official dev server (`langgraphjs dev` on our `langgraph.json`), each in its own process on the
 * same token-streaming OpenAI-compatible model (50 ms to the first chunk of each call), both driven
 * with the official SDK over the legacy protocol (`runs.stream`/`joinStream`) and the v2 thread
 * protocol (`threads.stream`, SSE): the time from the request that starts a run to the main agent's
 * first token, and the events per second one run delivers to 8 subscribers.
 */
export const streamingScenario: Scenario = {
  name: "streaming",
  title: "Streaming: v2 thread protocol and legacy runs.stream, ours and the dev server",
  async run({ quick }) {
    const ttftRepeat = quick ? { warmup: 2, iterations: 10 } : { warmup: 3, iterations: 40 };
    const fanRepeat = quick ? { warmup: 1, iterations: 3 } : { warmup: 2, iterations: 12 };
    const fanTokens = quick ? 100 : 300;
    const model = await startTokenModel({ latencyMs: LATENCY_MS, tokens: TTFT_TOKENS });
    const servers = await startStreamServers(model.url).catch(async (error: unknown) => {
      await model.close();
      throw error;
    });
    const targets: Record<ServerName, StreamTarget> = { ours: servers.ours, dev: servers.dev };
    const results = new Map<string, CellResult>(
      CELLS.map((cell) => [cellName(cell), { ...cell, firstTokenMs: [], fan: [], failures: [] }]),
    );
    try {
      for (const result of results.values()) await probe(targets[result.server], result);
      const live = () => [...results.values()].filter((result) => !result.unavailable);
      const ttftText = `hello tokens=${TTFT_TOKENS}`;
      for (let round = 0; round < ttftRepeat.warmup + ttftRepeat.iterations; round += 1) {
        for (const result of rotated(live(), round)) {
          const target = targets[result.server];
          const delivery = await attempt(result, () =>
            result.protocol === "legacy" ? legacyRun(target, ttftText) : v2Run(target, ttftText),
          );
          if (delivery && round >= ttftRepeat.warmup) {
            result.firstTokenMs.push(delivery.firstTokenMs);
          }
        }
      }
      const fanText = `${DELEGATE} tokens=${fanTokens}`;
      for (let round = 0; round < fanRepeat.warmup + fanRepeat.iterations; round += 1) {
        for (const result of rotated(live(), round)) {
          const deliveries = await attempt(result, () =>
            fanOut(targets[result.server], result.protocol, SUBSCRIBERS, fanText),
          );
          if (deliveries && round >= fanRepeat.warmup)
            result.fan.push(fanRun(deliveries, fanTokens));
        }
      }
    } finally {
      await servers.stop();
      await model.close();
    }
    const cells = [...results.values()];
    const expectedTokens = 2 * fanTokens;
    return {
      tables: [
        ttftTable(cells, ttftRepeat),
        fanTable(cells, fanRepeat, fanTokens),
        timelineTable(cells, fanTokens),
      ],
      data: {
        latencyMs: LATENCY_MS,
        ttftTokens: TTFT_TOKENS,
        fanTokens,
        subscribers: SUBSCRIBERS,
        ttftRepeat,
        fanRepeat,
        cells,
      },
      targets: PROTOCOLS.map((protocol) => completeness(cells, protocol, expectedTokens)),
    };
  },
};

/** One run of the cell before anything is timed: a cell its server refuses is left out. */
async function probe(target: StreamTarget, result: CellResult): Promise<void> {
  try {
    const delivery =
      result.protocol === "legacy"
        ? await legacyRun(target, "probe")
        : await v2Run(target, "probe");
    if (delivery.error) result.unavailable = delivery.error;
    else if (delivery.tokens === 0) result.unavailable = "the probe run streamed no token";
  } catch (error) {
    result.unavailable = String(error instanceof Error ? error.message : error).slice(0, 200);
  }
}

/** `run()`, a failure recorded instead of thrown (and a delivery's error counted as one). */
async function attempt<T extends Delivery | Delivery[]>(
  result: CellResult,
  run: () => Promise<T>,
): Promise<T | undefined> {
  try {
    const outcome = await run();
    const errors = (Array.isArray(outcome) ? outcome : [outcome]).flatMap((delivery) =>
      delivery.error ? [delivery.error] : [],
    );
    if (errors.length === 0) return outcome;
    result.failures.push(errors[0] ?? "");
  } catch (error) {
    result.failures.push(String(error instanceof Error ? error.message : error).slice(0, 200));
  }
  return undefined;
}

function fanRun(deliveries: Delivery[], answerTokens: number): FanRun {
  const ends = deliveries.map((delivery) => delivery.endMs);
  const wallMs = Math.max(...ends);
  const events = deliveries.map((delivery) => delivery.events);
  const tokens = deliveries.map((delivery) => delivery.tokens);
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  return {
    wallMs,
    events,
    tokens,
    eventsPerSecond: sum(events) / (wallMs / 1000),
    tokensPerSecond: sum(tokens) / (wallMs / 1000),
    spreadMs: wallMs - Math.min(...ends),
    firstTokenMs: Math.max(...deliveries.map((delivery) => delivery.firstTokenMs)),
    lastTokenMs: Math.max(...deliveries.map((delivery) => delivery.lastTokenMs)),
    answerTokensPerSecond: sum(
      deliveries.map(
        (delivery) => (answerTokens - 1) / ((delivery.lastTokenMs - delivery.firstTokenMs) / 1000),
      ),
    ),
  };
}

const find = (cells: readonly CellResult[], server: ServerName, protocol: Protocol) =>
  cells.find((cell) => cell.server === server && cell.protocol === protocol);

/** A cell's figure, NaN when it was not measured. */
function figure(cell: CellResult | undefined, pick: (cell: CellResult) => number): number {
  return cell && !cell.unavailable ? pick(cell) : Number.NaN;
}

function unavailableNotes(cells: readonly CellResult[]): string[] {
  return cells.flatMap((cell) =>
    cell.unavailable
      ? [`${SERVER_LABEL[cell.server]} ${cell.protocol}: not available (${cell.unavailable})`]
      : [],
  );
}

function failureNotes(cells: readonly CellResult[]): string[] {
  return cells.flatMap((cell) =>
    cell.failures.length
      ? [
          `${SERVER_LABEL[cell.server]} ${cell.protocol}: ${cell.failures.length} failed runs (left out), e.g. ${cell.failures[0]}`,
        ]
      : [],
  );
}

/** Rows per protocol plus a `v2 ÷ legacy` row; `columns` gives each server's figures. */
function comparisonRows(
  cells: readonly CellResult[],
  columns: { pick: (cell: CellResult) => number; digits: number }[],
): string[][] {
  const rows = PROTOCOLS.map((protocol) => {
    const values = columns.map((column) =>
      SERVERS.map((server) => figure(find(cells, server, protocol), column.pick)),
    );
    return [
      protocol,
      ...values.flatMap(([ours, dev], i) => [
        fmt(ours, columns[i]?.digits),
        fmt(dev, columns[i]?.digits),
        ratio((ours ?? Number.NaN) / (dev ?? Number.NaN)),
      ]),
    ];
  });
  const versus = columns.flatMap((column) => {
    const over = (server: ServerName) =>
      figure(find(cells, server, "v2"), column.pick) /
      figure(find(cells, server, "legacy"), column.pick);
    return [ratio(over("ours")), ratio(over("dev")), "—"];
  });
  return [...rows, ["v2 ÷ legacy", ...versus]];
}

function ttftTable(
  cells: readonly CellResult[],
  repeat: { warmup: number; iterations: number },
): Table {
  return {
    title: `Time from the run's start request to the main agent's first token at the client (ms; model ${LATENCY_MS} ms to its first chunk)`,
    headers: ["protocol", "ours p50", "dev p50", "ours ÷ dev", "ours p95", "dev p95", "ours ÷ dev"],
    rows: comparisonRows(cells, [
      { pick: (cell) => percentile(cell.firstTokenMs, 50), digits: 1 },
      { pick: (cell) => percentile(cell.firstTokenMs, 95), digits: 1 },
    ]),
    notes: [
      `${repeat.iterations} runs per cell after ${repeat.warmup} warm-up rounds, the four cells (server × protocol) in a rotating order, each run on a fresh thread, one client, a ${TTFT_TOKENS}-token answer of the main agent (no subagent). Legacy: the clock starts as \`client.runs.stream\` sends the request that creates the run; v2: the thread's \`ThreadStream\` is open and subscribed first (as a page has it), the clock starts as \`submitRun\` sends \`run.start\`. First token: the first non-empty text chunk outside a \`tools:\` namespace (legacy \`messages\` tuple; v2 \`content-block-delta\` text-delta).`,
      ...unavailableNotes(cells),
      ...failureNotes(cells),
    ],
  };
}

/** A fan-out figure of a cell: the median over its runs. */
const fan = (pick: (run: FanRun) => number) => (cell: CellResult) => median(cell.fan.map(pick));

function fanTable(
  cells: readonly CellResult[],
  repeat: { warmup: number; iterations: number },
  tokens: number,
): Table {
  return {
    title: `One run, ${SUBSCRIBERS} subscribers: events delivered per second (medians; the main agent delegates once, child and main answer ${tokens} tokens each)`,
    headers: [
      "protocol",
      "ours events/sub",
      "dev events/sub",
      "ours ÷ dev",
      "ours events/s",
      "dev events/s",
      "ours ÷ dev",
      "ours tokens/s",
      "dev tokens/s",
      "ours ÷ dev",
    ],
    rows: comparisonRows(cells, [
      { pick: fan((run) => median(run.events)), digits: 0 },
      { pick: fan((run) => run.eventsPerSecond), digits: 0 },
      { pick: fan((run) => run.tokensPerSecond), digits: 0 },
    ]),
    notes: [
      `${repeat.iterations} runs per cell after ${repeat.warmup} warm-up rounds, rotating order, each on a fresh thread. events/s = the ${SUBSCRIBERS} subscribers' events together ÷ (start request → the last subscriber's end of the run); tokens/s the same for text tokens only (each subscriber should get ${int(2 * tokens)}). Legacy: \`runs.create\` (stream modes values, updates, messages-tuple, custom; subgraphs; resumable) then ${SUBSCRIBERS} \`runs.joinStream(…, { lastEventId: "-1" })\`; v2: ${SUBSCRIBERS} \`ThreadStream\`s each subscribed to values, updates, messages, custom, tools, lifecycle before the run, a ninth one's \`submitRun\` starts it, each read until the root's lifecycle \`completed\`.`,
      "The two protocols carry different events for the same run (v2 has message-start/finish and content-block events, lifecycle and tools; legacy has a metadata event; the dev server's legacy stream adds `checkpoints` events it was not asked for): events/sub shows how many, tokens/s compares like with like.",
      ...unavailableNotes(cells),
      ...failureNotes(cells),
    ],
  };
}

function timelineTable(cells: readonly CellResult[], tokens: number): Table {
  return {
    title: `The same runs' timeline at the slowest of ${SUBSCRIBERS} subscribers (median ms from the start request)`,
    headers: [
      "protocol",
      "ours first token",
      "dev first token",
      "ours ÷ dev",
      "ours last token",
      "dev last token",
      "ours ÷ dev",
      "ours run end",
      "dev run end",
      "ours ÷ dev",
      "ours answer tokens/s",
      "dev answer tokens/s",
      "ours ÷ dev",
    ],
    rows: comparisonRows(cells, [
      { pick: fan((run) => run.firstTokenMs), digits: 0 },
      { pick: fan((run) => run.lastTokenMs), digits: 0 },
      { pick: fan((run) => run.wallMs), digits: 0 },
      { pick: fan((run) => run.answerTokensPerSecond), digits: 0 },
    ]),
    notes: [
      `first token: the main agent's first (it delegates first, so this is its ${tokens}-token answer after the child's); last token: the main agent's last; run end: the subscriber learns the run is over (legacy: the stream closes; v2: the root's lifecycle \`completed\`). The model's own share: 3 calls × ${LATENCY_MS} ms before their first chunk. answer tokens/s: the main agent's ${tokens}-token answer (its first to its last token) at each subscriber, summed over the ${SUBSCRIBERS}: the delivery rate while tokens flow, the run's start and end left out.`,
    ],
  };
}

/**
 * Not a target of the issue (it sets none for this measurement): every subscriber of ours gets
 * the whole run. Timing is reported only.
 */
function completeness(
  cells: readonly CellResult[],
  protocol: Protocol,
  expectedTokens: number,
): TargetCheck {
  const target = `every one of ${SUBSCRIBERS} subscribers gets the whole run, no failed run (ours, ${protocol})`;
  const cell = find(cells, "ours", protocol);
  if (!cell || cell.unavailable) {
    return { target, met: undefined, detail: `not available: ${cell?.unavailable ?? "not run"}` };
  }
  const short = cell.fan.filter((run) => run.tokens.some((count) => count !== expectedTokens));
  const uneven = cell.fan.filter((run) => new Set(run.events).size > 1);
  const dev = find(cells, "dev", protocol);
  const devShort = dev?.fan.filter((run) => run.tokens.some((count) => count !== expectedTokens));
  return {
    target,
    met: short.length === 0 && cell.failures.length === 0 && cell.fan.length > 0,
    detail: `ours: ${cell.fan.length} runs, ${short.length} with a subscriber short of ${expectedTokens} tokens, ${uneven.length} with subscribers' event counts differing, ${cell.failures.length} failed; dev server: ${dev?.unavailable ? "not available" : `${devShort?.length ?? 0} short, ${dev?.failures.length ?? 0} failed`}`,
  };
}
