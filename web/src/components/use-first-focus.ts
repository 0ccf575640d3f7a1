import type { RefObject } from "preact";
import { useLayoutEffect } from "preact/hooks";

/**
 * Focuses the first element in `container` matching `selector` when the component first
 * renders (and with `scroll`, brings the container into view first).
 *
 * A layout effect, so in the same task as that first render: an effect after a paint could
 * land once the user (or a test, on a loaded machine) has already moved to another field, and
 * take the keystrokes typed there.
 */
export function useFirstFocus(
  container: RefObject<HTMLElement | null>,
  selector: string,
  options: { scroll?: boolean } = {},
): void {
  const { scroll = false } = options;
  useLayoutEffect(() => {
    if (scroll) container.current?.scrollIntoView?.({ block: "start" });
    container.current?.querySelector<HTMLElement>(selector)?.focus({ preventScroll: scroll });
  }, []);
}
