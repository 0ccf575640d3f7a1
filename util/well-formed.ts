/**
 * Lone UTF-16 surrogates, found without `String.prototype.isWellFormed`/`toWellFormed` (ES2024):
 * the package's types must compile in a consumer whose `lib` stops at ES2022, so the root
 * tsconfig stops at ES2023 and these two stand in for the ES2024 methods.
 *
 * With the `u` flag a regular expression reads a string by code points, so a correctly paired
 * surrogate is one astral code point and only an unpaired half is in the `Surrogate` category.
 */
const LONE_SURROGATE = /\p{Surrogate}/u;
const LONE_SURROGATES = /\p{Surrogate}/gu;

/** True when `value` holds no lone surrogate (what `value.isWellFormed()` answers). */
export function isWellFormedUnicode(value: string): boolean {
  return !LONE_SURROGATE.test(value);
}

/** `value` with every lone surrogate replaced by U+FFFD (what `value.toWellFormed()` returns). */
export function toWellFormedUnicode(value: string): string {
  return value.replace(LONE_SURROGATES, "\uFFFD");
}
