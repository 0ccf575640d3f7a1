import type { RunnableConfig } from "@langchain/core/runnables";
import { DeltaChannel, messagesDeltaReducer, Send } from "@langchain/langgraph";
import {
  type BaseCheckpointSaver,
  type Checkpoint,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
} from "@langchain/langgraph-checkpoint";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { type ChannelReducers, readChannelValues } from "./delta-read.js";

/**
 * langchain's `createAgent` routes each tool call with `new Send("tools", { ...state,
 * lg_tool_call })`, so LangGraph stores the whole state in the step's `__pregel_tasks` write and
 * again in the next checkpoint's `__pregel_tasks` value: quadratic bytes even with delta storage
 * (ARCHITECTURE.md, "Send packets are stored by reference"). The savers that use this are in
 * `send-compacting-savers.ts`.
 *
 * {@link SendRefs} replaces, in a stored `Send` packet, a state key `k` of `reducers` by
 * {@link STATE_REF} when its serialized value is byte-equal to what a read can recompute:
 * - a `__pregel_tasks` write of task T on checkpoint P: `args[k]` = P's value of `k` with T's own
 *   writes to `k` (in this `putWrites` batch) applied, which is what LangGraph's branch reader
 *   (`ChannelRead` with fresh = true, `_localRead`) gave the router;
 * - a packet in a checkpoint C's `__pregel_tasks` value: the packet is byte-equal to the n-th
 *   `__pregel_tasks` write of task T on C's parent up to args that are `undefined` and the order
 *   of its args (see `packetBytes`), stored as {@link WRITE_REF} with its own key list.
 * Anything not proven equal is stored inline, as the stock saver stores it, so a wrong guess
 * costs bytes, never correctness. The proof is only as good as the read being deterministic:
 * the recomputation uses the same reducers on the same stored rows at write and read time.
 */
const STATE_REF = "__send_state_ref_v1";
const WRITE_REF = "__send_write_ref_v1";
/** Parents whose packets are remembered for `put`; a checkpoint follows its writes closely. */
const CACHE_PARENTS = 64;
/**
 * Serialized bytes of a step's packets' state (a compacted channel's value times the packets
 * carrying it) below which it stays inline: proving a reference reads the parent's state, a
 * round trip or more on PostgreSQL (4–5 ms a step measured there, bench/README.md,
 * "Scenario: dispatch"), dearer than the bytes while a thread is short.
 */
export const MIN_REF_BYTES = 2_048;
/** Longest a task's writes wait for their checkpoint's `put` to start before going inline. */
const PUT_WAIT_MS = 2_000;

/** The channels compacted by default: the agent's delta `messages` (see `channel-storage.ts`). */
export const DEFAULT_SEND_REF_REDUCERS: ChannelReducers = {
  messages: messagesDeltaReducer as ChannelReducers[string],
};

type Packet = { node: string; args: Record<string, unknown>; timeout?: unknown };
/** A Send as LangGraph hands it to the saver, or as the serializer loads it back (`{node, args}`). */
const isSend = (v: unknown): v is Packet =>
  v instanceof Send ||
  (typeof v === "object" && v !== null && typeof (v as Packet).node === "string" && "args" in v);
const isStateRef = (v: unknown) =>
  typeof v === "object" && v !== null && (v as Record<string, unknown>)[STATE_REF] === 1;
const writeRef = (v: unknown) =>
  typeof v === "object" && v !== null && WRITE_REF in v
    ? (v as Record<string, { task_id: string; n: number; keys: string[] }>)[WRITE_REF]
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

/** Counters for tests and the bench. */
export interface SendRefStats {
  stateRefs: number;
  stateInline: number;
  /** State values left inline for their size (see {@link MIN_REF_BYTES}), never read for. */
  stateSmall: number;
  writeRefs: number;
  writeInline: number;
}

/** The saver calls {@link SendRefs} needs, bound to the stock (uncompacted) implementations. */
export interface SaverAccess {
  saver: BaseCheckpointSaver;
  /** The base class's `getTuple`: stored rows as they are, no rehydration. */
  rawGetTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined>;
  /** The compacting saver's own `getTuple` (a parent's writes rehydrated). */
  getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined>;
}

/** The compaction and rehydration, shared by the SQLite and PostgreSQL savers. */
export class SendRefs {
  /** Serialized full packets of recent `__pregel_tasks` writes, by parent checkpoint. */
  private readonly recentPackets = new Map<
    string,
    { taskId: string; n: number; bytes: string }[]
  >();
  readonly stats: SendRefStats = {
    stateRefs: 0,
    stateInline: 0,
    stateSmall: 0,
    writeRefs: 0,
    writeInline: 0,
  };
  /** See {@link MIN_REF_BYTES} (0: every state value is a candidate for a reference). */
  minRefBytes = MIN_REF_BYTES;
  /**
   * `put`s and `putWrites` still running, by checkpoint key (a put by the checkpoint it stores,
   * writes by the checkpoint they belong to). LangGraph does not wait for a checkpoint's `put`
   * before its tasks' `putWrites`, nor for those before the next `put`: on PostgreSQL a task's
   * writes arrive while its checkpoint is still being stored (better-sqlite3 is synchronous, so
   * SQLite never sees it). A reference is only written once what it points to is stored.
   */
  private readonly runningPuts = new Map<string, Set<Promise<unknown>>>();
  private readonly runningWrites = new Map<string, Set<Promise<unknown>>>();
  /**
   * `putWrites` waiting for their checkpoint's `put` to start: LangGraph chains a checkpoint's
   * put after the previous one, so a task's writes can arrive before it. The put never waits for
   * them (only the next checkpoint's put does), so the wait cannot deadlock; it is bounded by
   * {@link PUT_WAIT_MS} for writes whose checkpoint another process stores.
   */
  private readonly putWaiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly access: SaverAccess,
    private readonly reducers: ChannelReducers,
  ) {}

  private get serde(): SerializerProtocol {
    return this.access.saver.serde;
  }

  /**
   * `value` serialized, as a comparable string. `memo` holds what this call already serialized,
   * by object: the `Send` packets of one model call share the state's arrays, so a step with k
   * tool calls serializes its messages once, not 2k times. A memo lives for one `putWrites` or
   * `put` only: LangGraph may fold later writes into the same arrays.
   */
  private async bytes(value: unknown, memo?: Map<object, string>): Promise<string> {
    const cached = typeof value === "object" && value !== null ? memo?.get(value) : undefined;
    if (cached !== undefined) return cached;
    const [type, data] = await this.serde.dumpsTyped(value);
    const bytes = `${type}:${Buffer.from(data).toString("latin1")}`;
    if (typeof value === "object" && value !== null) memo?.set(value, bytes);
    return bytes;
  }

  private async roundTrip(value: unknown): Promise<unknown> {
    const [type, data] = await this.serde.dumpsTyped(value);
    return this.serde.loadsTyped(type, data);
  }

  /**
   * The bytes of a packet up to the order of its args and the args set to `undefined`. A
   * checkpoint's packet differs from its write in just that: by the time LangGraph serializes the
   * checkpoint, the tools task has coerced its input (the packet's args) to the agent's state
   * schema, which adds `jumpTo: undefined` in the schema's key order. A {@link WRITE_REF} keeps
   * the checkpoint packet's own key list, so the rehydrated packet is byte-equal to it.
   */
  private async packetBytes(packet: Packet, memo: Map<object, string>): Promise<string> {
    const args = Object.entries(packet.args ?? {})
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    // Each arg serialized on its own (most packets of a step share their state's arrays), the
    // parts joined unambiguously: equal strings if and only if equal packets up to the above.
    const parts = [
      packet.node,
      packet.timeout === undefined ? "" : await this.bytes(packet.timeout),
    ];
    for (const [key, value] of args) parts.push(key, await this.bytes(value, memo));
    return JSON.stringify(parts);
  }

  /** The value of `key` a branch of the task read: `base` plus the task's own writes to `key`. */
  private withTaskWrites(key: string, base: Record<string, unknown>, taskWrites: unknown[]) {
    const reducer = this.reducers[key];
    if (!reducer) {
      throw new SubagentGraphError(
        ErrorCode.Internal,
        `SendRefs: no reducer for channel ${key} (the saver compacts ${Object.keys(this.reducers).join(", ")})`,
      );
    }
    const seed = base[key];
    // A copy: the reducer may fold into the seed, which is the caller's value.
    const channel = new DeltaChannel(reducer).fromCheckpoint(
      Array.isArray(seed) ? [...seed] : seed,
    );
    channel.update(taskWrites);
    return channel.get();
  }

  /** The key of the checkpoint `config` names (or of `id` in its thread and namespace). */
  static key(config: RunnableConfig, id?: string): string {
    const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
    return `${thread_id}\0${checkpoint_ns}\0${id ?? checkpoint_id}`;
  }

  /** Records a running `put` (`kind` "put", keyed by the stored checkpoint) or `putWrites`. */
  track<T>(kind: "put" | "writes", key: string, running: Promise<T>): Promise<T> {
    const map = kind === "put" ? this.runningPuts : this.runningWrites;
    const set = map.get(key) ?? new Set();
    map.set(key, set);
    set.add(running);
    if (kind === "put") {
      const waiters = this.putWaiters.get(key);
      this.putWaiters.delete(key);
      for (const wake of waiters ?? []) running.then(wake, wake);
    }
    const forget = () => {
      set.delete(running);
      if (set.size === 0 && map.get(key) === set) map.delete(key);
    };
    running.then(forget, forget);
    return running;
  }

  /**
   * Waits for this saver's `put`s and `putWrites` still running on `threadId` (its root
   * namespace and subgraphs'). An aborted run rejects while the writes of tasks that finished
   * just before are still being stored; code that reads the thread next (the cancellation repair)
   * must see them, or it answers a finished call a second time.
   */
  async threadSettled(threadId: string): Promise<void> {
    const prefix = `${threadId}\0`;
    for (let round = 0; round < 10; round += 1) {
      const running = [...this.runningPuts, ...this.runningWrites]
        .filter(([key]) => key.startsWith(prefix))
        .flatMap(([, set]) => [...set]);
      if (running.length === 0) return;
      await Promise.allSettled(running);
    }
  }

  /** Waits until a `put` of `key` has run (started before or within {@link PUT_WAIT_MS}). */
  private async putDone(key: string): Promise<void> {
    if (this.runningPuts.has(key)) {
      await this.settled("put", key);
      return;
    }
    await new Promise<void>((resolve) => {
      const waiters = this.putWaiters.get(key) ?? new Set();
      this.putWaiters.set(key, waiters);
      const timer = setTimeout(() => {
        waiters.delete(resolve);
        if (waiters.size === 0 && this.putWaiters.get(key) === waiters) this.putWaiters.delete(key);
        resolve();
      }, PUT_WAIT_MS);
      waiters.add(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Waits for the running calls of `kind` on `key`; false when one of them failed. */
  private async settled(kind: "put" | "writes", key: string): Promise<boolean> {
    const running = (kind === "put" ? this.runningPuts : this.runningWrites).get(key);
    if (!running) return true;
    const results = await Promise.allSettled([...running]);
    return results.every((r) => r.status === "fulfilled");
  }

  /** `writes` with each provable `Send` state value replaced by a reference. */
  async compactWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
  ): Promise<PendingWrite[]> {
    const sendCount = writes.filter(([ch, v]) => ch === TASKS && isSend(v)).length;
    if (sendCount === 0) return writes;
    const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
    const parentKey = `${thread_id}\0${checkpoint_ns}\0${checkpoint_id}`;
    const known = this.recentPackets.get(parentKey) ?? [];
    const recent: { taskId: string; n: number; bytes: string }[] = [];
    const memo = new Map<object, string>();
    // The value each compacted key must equal: the same for every packet of this task.
    const expectedBytes = new Map<string, Promise<string>>();
    // P's values; null when P is not stored (nothing to recompute from, so all inline).
    let base: Record<string, unknown> | null | undefined;
    let n = 0;
    const out: PendingWrite[] = [];
    for (const [channel, value] of writes) {
      if (channel !== TASKS || !isSend(value)) {
        out.push([channel, value]);
        continue;
      }
      const index = n++;
      // The saver keeps the first row of a (task, index) and ignores a repeat, so the cache does
      // too: a checkpoint must never refer to a packet that is not the stored one.
      if (!known.some((r) => r.taskId === taskId && r.n === index)) {
        recent.push({ taskId, n: index, bytes: await this.packetBytes(value, memo) });
      }
      const args = value.args as Record<string, unknown> | undefined;
      const keys: string[] = [];
      for (const key of Object.keys(this.reducers)) {
        if (!args || typeof args !== "object" || !Array.isArray(args[key])) continue;
        const size = (await this.bytes(args[key], memo)).length * sendCount;
        if (size < this.minRefBytes) this.stats.stateSmall++;
        else keys.push(key);
      }
      if (!args || keys.length === 0) {
        out.push([channel, value]);
        continue;
      }
      if (base === undefined) {
        const parentConfig = { configurable: { thread_id, checkpoint_ns, checkpoint_id } };
        await this.settled("put", parentKey);
        let tuple = await this.access.rawGetTuple(parentConfig);
        if (!tuple) {
          await this.putDone(parentKey);
          tuple = await this.access.rawGetTuple(parentConfig);
        }
        base = tuple ? await readChannelValues(this.access.saver, tuple, this.reducers) : null;
      }
      const newArgs = { ...args };
      for (const key of keys) {
        if (base === null) {
          this.stats.stateInline++;
          continue;
        }
        const parentValues = base;
        let expected = expectedBytes.get(key);
        if (!expected) {
          expected = (async () => {
            // As a read will see them: through the serializer.
            const own = await Promise.all(
              writes.filter(([ch]) => ch === key).map(([, v]) => this.roundTrip(v)),
            );
            return this.bytes(this.withTaskWrites(key, parentValues, own));
          })();
          expectedBytes.set(key, expected);
        }
        if ((await expected) === (await this.bytes(args[key], memo))) {
          newArgs[key] = { [STATE_REF]: 1 };
          this.stats.stateRefs++;
        } else {
          this.stats.stateInline++;
        }
      }
      out.push([channel, rebuild(value as Packet, newArgs)]);
    }
    this.recentPackets.delete(parentKey);
    this.recentPackets.set(parentKey, [...known, ...recent]);
    while (this.recentPackets.size > CACHE_PARENTS) {
      const oldest = this.recentPackets.keys().next().value;
      if (oldest === undefined) break;
      this.recentPackets.delete(oldest);
    }
    return out;
  }

  /** `checkpoint` with each packet equal to one of its parent's writes replaced by a reference. */
  async compactCheckpoint(config: RunnableConfig, checkpoint: Checkpoint): Promise<Checkpoint> {
    const packets = checkpoint.channel_values?.[TASKS];
    const { thread_id, checkpoint_ns = "", checkpoint_id: parent } = config.configurable ?? {};
    const recent = this.recentPackets.get(`${thread_id}\0${checkpoint_ns}\0${parent}`);
    if (!Array.isArray(packets) || packets.length === 0 || !recent || !parent) return checkpoint;
    // A reference to a write that failed to store would make this checkpoint unreadable.
    if (!(await this.settled("writes", SendRefs.key(config)))) return checkpoint;
    const stored: unknown[] = [];
    const memo = new Map<object, string>();
    for (const packet of packets) {
      const match = isSend(packet)
        ? await this.packetBytes(packet, memo).then((bytes) =>
            recent.find((r) => r.bytes === bytes),
          )
        : undefined;
      if (match) {
        const keys = Object.keys((packet as Packet).args ?? {});
        stored.push({ [WRITE_REF]: { task_id: match.taskId, n: match.n, keys } });
        this.stats.writeRefs++;
      } else {
        stored.push(packet);
        this.stats.writeInline++;
      }
    }
    return { ...checkpoint, channel_values: { ...checkpoint.channel_values, [TASKS]: stored } };
  }

  /** `tuple` as the stock saver would have read it: every reference resolved. */
  async rehydrate(tuple: CheckpointTuple): Promise<CheckpointTuple> {
    let base: Record<string, unknown> | undefined;
    const pending = tuple.pendingWrites ?? [];
    const writes: typeof pending = [];
    for (const write of pending) {
      const [taskId, channel, value] = write;
      const args = isSend(value) ? (value.args as Record<string, unknown>) : undefined;
      if (channel !== TASKS || !args || !Object.values(args).some(isStateRef)) {
        writes.push(write);
        continue;
      }
      base ??= await readChannelValues(this.access.saver, tuple, this.reducers);
      const newArgs = { ...args };
      for (const [key, v] of Object.entries(args)) {
        if (!isStateRef(v)) continue;
        const own = pending.filter(([t, ch]) => t === taskId && ch === key).map(([, , w]) => w);
        newArgs[key] = this.withTaskWrites(key, base, own);
      }
      writes.push([taskId, channel, rebuild(value as unknown as Packet, newArgs)]);
    }
    const result: CheckpointTuple = { ...tuple, pendingWrites: writes };
    const packets = tuple.checkpoint.channel_values?.[TASKS];
    if (Array.isArray(packets) && packets.some((p) => writeRef(p))) {
      const parent = tuple.parentConfig
        ? await this.access.getTuple(tuple.parentConfig)
        : undefined;
      const resolved = packets.map((p) => {
        const ref = writeRef(p);
        if (!ref) return p;
        const found = (parent?.pendingWrites ?? []).filter(
          ([t, ch]) => t === ref.task_id && ch === TASKS,
        )[ref.n];
        if (!found) {
          // Only if the parent's writes were deleted behind the saver's back (a pruned thread).
          throw new SubagentGraphError(
            ErrorCode.CheckpointIncompatible,
            `Send packet reference: checkpoint ${tuple.config.configurable?.checkpoint_id} of thread ${tuple.config.configurable?.thread_id} refers to write ${ref.task_id}#${ref.n} of its parent, which is not stored; the thread's checkpoints were pruned without their descendants`,
          );
        }
        const written = found[2] as Packet;
        const args = written.args ?? {};
        return rebuild(written, Object.fromEntries(ref.keys.map((k) => [k, args[k]])));
      });
      result.checkpoint = {
        ...tuple.checkpoint,
        channel_values: { ...tuple.checkpoint.channel_values, [TASKS]: resolved },
      };
    }
    return result;
  }
}
