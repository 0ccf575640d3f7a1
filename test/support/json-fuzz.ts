/**
 * Seeded generators of hostile request input for the route fuzz pass
 * (`test/server/fuzz.int.test.ts`): random JSON of every type, deep and long values, unicode that
 * breaks naive code (lone surrogates, NUL, RTL overrides, emoji), numbers JSON cannot hold
 * exactly, mutations of a valid body, malformed text and odd path segments. Same seed, same
 * sequence: a failure is replayed with `FUZZ_SEED=<seed>`.
 */

/** A seeded pseudo-random source (mulberry32: small, fast, good enough for test input). */
export class Rng {
  #state: number;

  constructor(readonly seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined) throw new Error("Rng.pick: no items");
    return item;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** Strings that have broken parsers, databases, file systems or terminals somewhere. */
export const NASTY_STRINGS: readonly string[] = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udfffy",
  "\ud83d",
  "\u202eevil\u202c",
  "\u200f\u05e9\u05dc\u05d5\u05dd",
  "🦜🔗👩‍👩‍👧‍👦",
  "e\u0301\u0301\u0301",
  "\ufeffbom",
  "\uffff\ufffe",
  "..",
  "../../etc/passwd",
  "/home/gem/user-data/outputs/../../../x",
  "%00",
  "%2e%2e%2f",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "null",
  "undefined",
  "NaN",
  "-1",
  "0x10",
  "1e309",
  "true",
  "[]",
  "{}",
  "'; DROP TABLE threads; --",
  "$\u007bprocess.exit()}",
  "<script>alert(1)</script>",
  "\r\n\r\nHTTP/1.1 200 OK",
  "a_sub_researcher_0123abcd",
  "ghost_own_0123456789abcdef",
  "offline",
  "human",
  "values",
];

/** Numbers at the edges of what JSON and JavaScript agree on. */
export const NASTY_NUMBER_TEXTS: readonly string[] = [
  "0",
  "-0",
  "1",
  "-1",
  "0.5",
  "1e308",
  "-1e308",
  "1e-324",
  "9007199254740993",
  "123456789012345678901234567890",
  "2147483648",
  "-2147483649",
  "1.7976931348623157e309",
  "4.2e1",
];

/** A random string: a nasty one, random code units (lone surrogates included), or a long one. */
export function randomString(rng: Rng): string {
  const kind = rng.int(10);
  if (kind < 5) return rng.pick(NASTY_STRINGS);
  if (kind < 8) {
    let text = "";
    const length = rng.int(40);
    for (let i = 0; i < length; i++) {
      text += String.fromCharCode(
        rng.pick([rng.int(0x80), rng.int(0x10000), 0xd800 + rng.int(0x800), 0x202e]),
      );
    }
    return text;
  }
  return rng.pick(["x", "é", "🦜", "\u0000"]).repeat(rng.pick([1_000, 70_000, 200_000]));
}

/** A random JSON value (as an object: JSON.stringify makes its text), at most `depth` deep. */
export function randomValue(rng: Rng, depth = 4): unknown {
  const kind = depth <= 0 ? rng.int(5) : rng.int(8);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return Number(rng.pick(NASTY_NUMBER_TEXTS));
    case 3:
    case 4:
      return randomString(rng);
    case 5:
    case 6: {
      const object: Record<string, unknown> = {};
      for (let i = rng.int(5); i > 0; i--) {
        object[rng.chance(0.5) ? randomString(rng).slice(0, 50) : rng.pick(COMMON_KEYS)] =
          randomValue(rng, depth - 1);
      }
      return object;
    }
    default:
      return Array.from({ length: rng.int(5) }, () => randomValue(rng, depth - 1));
  }
}

/** Keys our bodies use, so random objects hit real fields with wrong values. */
const COMMON_KEYS = [
  "metadata",
  "values",
  "messages",
  "type",
  "content",
  "input",
  "assistant_id",
  "thread_id",
  "checkpoint_id",
  "config",
  "context",
  "limit",
  "before",
  "ids",
  "select",
  "slug",
  "config_json",
  "share_config",
] as const;

/** JSON text nested `levels` deep, as objects or arrays. */
export function deepText(rng: Rng, levels: number): string {
  return rng.chance(0.5)
    ? `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`
    : `${"[".repeat(levels)}${"]".repeat(levels)}`;
}

/** Text that is not JSON, or JSON that a strict parser must refuse. */
export const MALFORMED_TEXTS: readonly string[] = [
  "",
  " ",
  "{",
  "}",
  '{"a":}',
  "{'a':1}",
  '{"a":1,}',
  "[1,2",
  "nul",
  "NaN",
  "Infinity",
  '{"a":1}{"b":2}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  "\ufeff{}",
  '"\\ud800"',
  '{"a":"\\u0000"}',
  "\u0000",
  '{"a":1e99999}',
];

/**
 * Path segments of odd shapes, already encoded for a URL: empty-ish, dot segments, encoded
 * separators and NUL, invalid percent-encoding and UTF-8, a lone surrogate, long ones, and ids
 * shaped like our own (child thread ids, stored per-user ids).
 */
export const ODD_SEGMENTS: readonly string[] = [
  "%20",
  ".",
  "..",
  "...",
  "%2e%2e",
  "a%2Fb",
  "%00",
  "a%00b",
  "%",
  "%ZZ",
  "%ED%A0%80",
  "%C0%AF",
  encodeURIComponent("\ud83d\udc3b"),
  encodeURIComponent("\u202eevil"),
  "x".repeat(512),
  "x".repeat(600),
  "ghost_own_0123456789abcdef",
  "t_sub_researcher_0123abcd",
  "__proto__",
  "constructor",
  "-1",
  "0",
  "null",
  "undefined",
  "%7B%7D",
];

/**
 * A copy of a valid body with one change: a field set to a random value or a deep one, a field
 * removed, a field added, or an object turned into an array.
 */
export function mutate(rng: Rng, body: unknown): unknown {
  const copy: unknown = JSON.parse(JSON.stringify(body));
  const slots = containers(copy);
  const target = rng.pick(slots);
  const keys = Object.keys(target);
  const key = keys.length > 0 && rng.chance(0.8) ? rng.pick(keys) : rng.pick(COMMON_KEYS);
  const set = (value: unknown) => {
    (target as Record<string, unknown>)[key] = value;
  };
  switch (rng.int(6)) {
    case 0:
      delete (target as Record<string, unknown>)[key];
      break;
    case 1:
      set(JSON.parse(deepText(rng, rng.pick([63, 64, 65, 200]))));
      break;
    case 2:
      set([target[key as keyof typeof target]]);
      break;
    case 3:
      set(randomString(rng));
      break;
    default:
      set(randomValue(rng, 3));
  }
  return copy;
}

/** The objects and arrays inside `value` (itself included). */
function containers(value: unknown): object[] {
  const found: object[] = [];
  const stack = [value];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (typeof item !== "object" || item === null) continue;
    found.push(item);
    stack.push(...Object.values(item));
  }
  return found;
}

/**
 * `text` percent-encoded byte by byte as UTF-8 (a lone surrogate becomes U+FFFD's bytes, where
 * `encodeURIComponent` would throw).
 */
export function percentEncode(text: string): string {
  return [...Buffer.from(text, "utf8")]
    .map((byte) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`,
    )
    .join("");
}
