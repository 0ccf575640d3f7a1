/** One event of a run's stream: its name, its JSON data and its SSE id (to rejoin after it). */
export interface SseEvent {
  event: string;
  data: unknown;
  id: string | undefined;
}
