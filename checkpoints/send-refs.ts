import type { RunnableConfig } from "@langchain/core/runnables";
import { DeltaChannel, Send } from "@langchain/langgraph";
import {
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
  TASKS,
} from "@langchain/langgraph-checkpoint";
import type Database from "better-sqlite3";
import { type ChannelReducers, readChannelValues } from "./delta-read.js";
import { DeltaHistorySqliteSaver } from "./sqlite-saver.js";

/**
 * PROTOTYPE (branch send-compaction). Replaces, in a stored `Send` packet, a state key `k` of
 * `reducers` by {@link STATE_REF} when its serialized value is byte-equal to what a read can
 * recompute:
 * - a `__pregel_tasks` write of task T on checkpoint P: `args[k]` = P's value of `k` with T's own
 *   writes to `k` (in this `putWrites` batch) applied, which is what LangGraph's branch reader
 *   (`ChannelRead` with fresh = true, `_localRead`) gave the router;
 * - a packet in a checkpoint C's `__pregel_tasks` value: the whole packet is byte-equal to the
 *   n-th `__pregel_tasks` write of task T on C's parent, stored as {@link WRITE_REF}.
 * Anything not proven equal is stored inline, as the stock saver stores it.
 */
const STATE_REF = "__send_state_ref_v1";
const WRITE_REF = "__send_write_ref_v1";
const CACHE_PARENTS = 64;

type Packet = { node: string; args: Record<string, unknown>; timeout?: unknown };
/** A Send as LangGraph hands it to the saver, or as the serializer loads it back (`{node, args}`). */
const isSend = (v: unknown): v is Packet =>
  v instanceof Send ||
  (typeof v === "object" && v !== null && typeof (v as Packet).node === "string" && "args" in v);
const isStateRef = (v: unknown) =>
  typeof v === "object" && v !== null && (v as Record<string, unknown>)[STATE_REF] === 1;
const writeRef = (v: unknown) =>
  typeof v === "object" && v !== null && WRITE_REF in v
    ? (v as Record<string, { task_id: string; n: number }>)[WRITE_REF]
    : undefined;
/** The packet with other args, in the same shape (a Send stays a Send, a loaded object an object). */
const rebuild = (send: Packet, args: Record<string, unknown>): Packet =>
  send instanceof Send
    ? new Send(
        send.node,
        args,
        send.timeout === undefined ? undefined : { timeout: send.timeout as never },
      )
    : { ...send, args };

export class SendCompactingSqliteSaver extends DeltaHistorySqliteSaver {
  /** Serialized full packets of recent `__pregel_tasks` writes, by parent checkpoint. */
  private readonly recentPackets = new Map<
    string,
    { taskId: string; n: number; bytes: string }[]
  >();
  /** Counters for tests and the bench. */
  readonly stats = { stateRefs: 0, stateInline: 0, writeRefs: 0, writeInline: 0 };

  constructor(
    db: Database.Database,
    private readonly reducers: ChannelReducers,
  ) {
    super(db);
  }

  private async bytes(value: unknown): Promise<string> {
    const [type, data] = await this.serde.dumpsTyped(value);
    return `${type}:${Buffer.from(data).toString("base64")}`;
  }

  private async roundTrip(value: unknown): Promise<unknown> {
    const [type, data] = await this.serde.dumpsTyped(value);
    return this.serde.loadsTyped(type, data);
  }

  /** The value of `key` a branch of `taskId` read: `base` plus the task's own writes to `key`. */
  private withTaskWrites(
    key: string,
    base: Record<string, unknown>,
    taskWrites: unknown[],
  ): unknown {
    const reducer = this.reducers[key];
    if (!reducer) throw new Error(`no reducer for ${key}`);
    const seed = base[key];
    const channel = new DeltaChannel(reducer).fromCheckpoint(
      Array.isArray(seed) ? [...seed] : seed,
    );
    channel.update(taskWrites);
    return channel.get();
  }

  override async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath = "",
  ): Promise<void> {
    const sends = writes.filter(([ch, v]) => ch === TASKS && isSend(v));
    if (sends.length === 0) return super.putWrites(config, writes, taskId, taskPath);
    const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
    const parentKey = `${thread_id}\0${checkpoint_ns}\0${checkpoint_id}`;
    const recent: { taskId: string; n: number; bytes: string }[] = [];
    let base: Record<string, unknown> | undefined;
    let n = 0;
    const out: PendingWrite[] = [];
    for (const [channel, value] of writes) {
      if (channel !== TASKS || !isSend(value)) {
        out.push([channel, value]);
        continue;
      }
      recent.push({ taskId, n: n++, bytes: await this.bytes(value) });
      const args = value.args as Record<string, unknown> | undefined;
      const keys = Object.keys(this.reducers).filter(
        (k) => args && typeof args === "object" && Array.isArray(args[k]),
      );
      if (!args || keys.length === 0) {
        out.push([channel, value]);
        continue;
      }
      if (base === undefined) {
        const tuple = await this.getTuple({
          configurable: { thread_id, checkpoint_ns, checkpoint_id },
        });
        base = tuple ? await readChannelValues(this, tuple, this.reducers) : {};
        if (!tuple) base = { __missing: true };
      }
      const newArgs = { ...args };
      for (const key of keys) {
        if (base.__missing) {
          this.stats.stateInline++;
          continue;
        }
        const own = await Promise.all(
          writes.filter(([ch]) => ch === key).map(([, v]) => this.roundTrip(v)),
        );
        const expected = this.withTaskWrites(key, base, own);
        if ((await this.bytes(expected)) === (await this.bytes(args[key]))) {
          newArgs[key] = { [STATE_REF]: 1 };
          this.stats.stateRefs++;
        } else {
          this.stats.stateInline++;
        }
      }
      out.push([channel, rebuild(value as Packet, newArgs)]);
    }
    this.recentPackets.set(parentKey, [...(this.recentPackets.get(parentKey) ?? []), ...recent]);
    while (this.recentPackets.size > CACHE_PARENTS) {
      const oldest = this.recentPackets.keys().next().value;
      if (oldest === undefined) break;
      this.recentPackets.delete(oldest);
    }
    return super.putWrites(config, out, taskId, taskPath);
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
  ): Promise<RunnableConfig> {
    const packets = checkpoint.channel_values?.[TASKS];
    const { thread_id, checkpoint_ns = "", checkpoint_id: parent } = config.configurable ?? {};
    const recent = this.recentPackets.get(`${thread_id}\0${checkpoint_ns}\0${parent}`);
    if (!Array.isArray(packets) || packets.length === 0 || !recent || !parent) {
      return super.put(config, checkpoint, metadata);
    }
    const stored: unknown[] = [];
    for (const packet of packets) {
      const bytes = await this.bytes(packet);
      const match = recent.find((r) => r.bytes === bytes);
      if (match) {
        stored.push({ [WRITE_REF]: { task_id: match.taskId, n: match.n } });
        this.stats.writeRefs++;
      } else {
        stored.push(packet);
        this.stats.writeInline++;
      }
    }
    const copy: Checkpoint = {
      ...checkpoint,
      channel_values: { ...checkpoint.channel_values, [TASKS]: stored },
    };
    return super.put(config, copy, metadata);
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const tuple = await super.getTuple(config);
    return tuple ? this.rehydrate(tuple) : tuple;
  }

  override async *list(
    config: RunnableConfig,
    options?: Parameters<DeltaHistorySqliteSaver["list"]>[1],
  ): AsyncGenerator<CheckpointTuple> {
    for await (const tuple of super.list(config, options)) yield await this.rehydrate(tuple);
  }

  private async rehydrate(tuple: CheckpointTuple): Promise<CheckpointTuple> {
    let base: Record<string, unknown> | undefined;
    const pending = tuple.pendingWrites ?? [];
    const writes = [];
    for (const write of pending) {
      const [taskId, channel, value] = write;
      const args = isSend(value) ? (value.args as Record<string, unknown>) : undefined;
      if (channel !== TASKS || !args || !Object.values(args).some(isStateRef)) {
        writes.push(write);
        continue;
      }
      base ??= await readChannelValues(this, tuple, this.reducers);
      const newArgs = { ...args };
      for (const [key, v] of Object.entries(args)) {
        if (!isStateRef(v)) continue;
        const own = pending.filter(([t, ch]) => t === taskId && ch === key).map(([, , w]) => w);
        newArgs[key] = this.withTaskWrites(key, base, own);
      }
      writes.push([taskId, channel, rebuild(value as unknown as Packet, newArgs)] as typeof write);
    }
    const result: CheckpointTuple = { ...tuple, pendingWrites: writes };
    const packets = tuple.checkpoint.channel_values?.[TASKS];
    if (Array.isArray(packets) && packets.some((p) => writeRef(p))) {
      const parent = tuple.parentConfig ? await this.getTuple(tuple.parentConfig) : undefined;
      const resolved = packets.map((p) => {
        const ref = writeRef(p);
        if (!ref) return p;
        const found = (parent?.pendingWrites ?? []).filter(
          ([t, ch]) => t === ref.task_id && ch === TASKS,
        )[ref.n];
        if (!found) {
          throw new Error(
            `SendCompactingSqliteSaver: checkpoint ${tuple.config.configurable?.checkpoint_id} refers to write ${ref.task_id}#${ref.n} of its parent, which is gone`,
          );
        }
        return found[2];
      });
      result.checkpoint = {
        ...tuple.checkpoint,
        channel_values: { ...tuple.checkpoint.channel_values, [TASKS]: resolved },
      };
    }
    return result;
  }
}
