/**
 * The README's code blocks, as a reader copies them: what the doc test typechecks and runs.
 *
 * A TypeScript block names the file a reader saves it as after the language
 * (```` ```ts library.ts ````; Markdown renderers ignore the rest of the info string), so blocks
 * that import each other (`./agents.js`) can be written side by side and run in README order.
 */

/** One fenced block of a Markdown file. */
export interface CodeBlock {
  /** The info string's first word (`ts`, `sh`, …); empty when there is none. */
  language: string;
  /** The info string's second word: the file a reader saves the block as, if it names one. */
  file: string | undefined;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
}

const FENCE = /^(`{3,}|~{3,})(.*)$/;

/** Every fenced block of `markdown`, in order (a nested fence of fewer backticks is content). */
export function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split("\n");
  const blocks: CodeBlock[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const open = FENCE.exec(lines[index] ?? "");
    if (!open) continue;
    const fence = open[1] ?? "```";
    const [language = "", file] = (open[2] ?? "").trim().split(/\s+/);
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && !(lines[end] ?? "").startsWith(fence)) {
      body.push(lines[end] ?? "");
      end += 1;
    }
    if (end === lines.length) throw new Error(`unclosed code block at line ${index + 1}`);
    blocks.push({ language, file, code: `${body.join("\n")}\n`, line: index + 1 });
    index = end;
  }
  return blocks;
}

/** Whether a block is TypeScript. */
export function isTypeScript(block: CodeBlock): boolean {
  return block.language === "ts" || block.language === "typescript";
}

/**
 * The commands of a shell block, one per line, without comments and prompts; a line continued
 * with `\` is joined to the next.
 */
export function shellCommands(block: CodeBlock): string[] {
  const joined = block.code.replace(/\\\n/g, " ");
  return joined
    .split("\n")
    .map((line) => line.replace(/(^|\s)#.*$/, "").trim())
    .filter((line) => line.length > 0);
}
