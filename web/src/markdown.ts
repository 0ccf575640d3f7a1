/**
 * Markdown answers as safe HTML: `marked` parses (GitHub-flavoured: tables, fenced code), and
 * DOMPurify removes everything that could run or restyle the page (scripts, event handlers,
 * `javascript:` links, inline styles, forms, frames). Models repeat whatever they read, so an
 * answer is untrusted input. The page's Content-Security-Policy is a second wall: it runs no
 * inline script and applies no inline style even if one got through.
 */

import DOMPurify from "dompurify";
import { Marked } from "marked";

/** One parser for the page: GitHub-flavoured, line breaks kept as a chat user typed them. */
const parser = new Marked({ gfm: true, breaks: true, async: false });

/** What answers may contain: text structure, links, images, code and tables. */
const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object"],
  FORBID_ATTR: ["style", "class", "id"],
} as const;

// Links open in a new tab without handing it this page (window.opener) or the referrer.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

/** The sanitised HTML of a markdown text. */
export function renderMarkdown(text: string): string {
  const html = parser.parse(text) as string;
  return DOMPurify.sanitize(html, {
    ...PURIFY,
    FORBID_TAGS: [...PURIFY.FORBID_TAGS],
    FORBID_ATTR: [...PURIFY.FORBID_ATTR],
  });
}
