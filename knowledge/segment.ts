/**
 * Word segmentation for full-text search.
 *
 * Neither FTS5's `unicode61` tokenizer nor PostgreSQL's default parser splits Chinese or
 * Japanese: a run of Han characters is one token, so `检索` never matches a sentence containing
 * `信息检索系统`. The built-in `Intl.Segmenter` (ICU's dictionary-based word breaker, in every
 * Node build with full ICU) splits those runs into words, which are then indexed and queried as
 * space-separated tokens. Latin text passes through unchanged: the engines' own tokenizers (with
 * stemming) handle it better.
 */

/** Scripts written without spaces between words. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]+/gu;

const segmenter = new Intl.Segmenter("zh", { granularity: "word" });

/** `text` with every run of Han/Kana characters split into space-separated words. */
export function segmentForSearch(text: string): string {
  return text.replace(UNSPACED, (run) => ` ${wordsOf(run).join(" ")} `);
}

/**
 * The words of a search query: Latin words as the engines' tokenizers would split them (letters
 * and digits), Han/Kana runs segmented. Lower-cased, deduplicated, in order.
 */
export function queryWords(query: string): string[] {
  const words: string[] = [];
  for (const token of segmentForSearch(query).split(/[^\p{L}\p{N}]+/u)) {
    const word = token.toLowerCase();
    if (word !== "" && !words.includes(word)) words.push(word);
  }
  return words;
}

function wordsOf(run: string): string[] {
  const words: string[] = [];
  for (const part of segmenter.segment(run)) {
    if (part.isWordLike) words.push(part.segment);
  }
  return words;
}
