import { useEffect, useState } from "preact/hooks";

/** The current time, refreshed every `intervalMs` while `active` (for elapsed-time displays). */
export function useNow(active: boolean, intervalMs = 200): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [active, intervalMs]);
  return now;
}
