import { useEffect, useRef } from "preact/hooks";
import { renderMarkdown } from "../markdown.js";

/**
 * An answer rendered from markdown (sanitised: see `markdown.ts`), each code block with a Copy
 * button. The buttons are added after rendering, with listeners rather than inline handlers,
 * which the page's Content-Security-Policy would refuse.
 */
export function MarkdownText(props: { text: string }) {
  const root = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = root.current;
    if (!element) return;
    for (const block of element.querySelectorAll("pre")) {
      if (block.parentElement?.classList.contains("code-block")) continue;
      const wrapper = document.createElement("div");
      wrapper.className = "code-block";
      block.replaceWith(wrapper);
      wrapper.append(block);
      const copy = document.createElement("button");
      copy.type = "button";
      copy.className = "secondary copy";
      copy.textContent = "Copy";
      copy.setAttribute("aria-label", "Copy code");
      copy.addEventListener("click", () => {
        const code = block.textContent ?? "";
        navigator.clipboard?.writeText(code).then(
          () => {
            copy.textContent = "Copied";
          },
          () => {
            copy.textContent = "Copy failed";
          },
        );
      });
      wrapper.append(copy);
    }
  }, [props.text]);
  return (
    <div
      ref={root}
      class="text markdown"
      dangerouslySetInnerHTML={{ __html: renderMarkdown(props.text) }}
    />
  );
}
