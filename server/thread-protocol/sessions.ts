import type { RunDoor } from "./run-adapter.js";
import { ThreadSession } from "./thread-session.js";

/** Threads whose sessions stay in memory with nobody listening (for `since` replays). */
const MAX_IDLE_SESSIONS = 200;

/**
 * The {@link ThreadSession}s of this process, one per (user, stored thread id): the user is
 * part of the key, so a session never mixes two users' threads whatever their ids. Idle
 * sessions (no listener, no run followed) beyond {@link MAX_IDLE_SESSIONS} are dropped, least
 * recently used first.
 */
export class ThreadSessions {
  private readonly sessions = new Map<string, ThreadSession>();

  constructor(
    private readonly door: RunDoor,
    private readonly warn: (message: string) => void,
  ) {}

  get(uid: string, threadId: string): ThreadSession {
    const key = `${uid}\0${threadId}`;
    let session = this.sessions.get(key);
    if (!session) {
      session = new ThreadSession(uid, threadId, this.door, this.warn);
      this.sessions.set(key, session);
      this.prune();
    }
    session.lastUsed = Date.now();
    return session;
  }

  closeAll(): void {
    for (const session of this.sessions.values()) session.close();
    this.sessions.clear();
  }

  private prune(): void {
    const idle = [...this.sessions.entries()]
      .filter(([, session]) => !session.listening)
      .sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    for (const [key, session] of idle.slice(0, Math.max(0, idle.length - MAX_IDLE_SESSIONS))) {
      session.close();
      this.sessions.delete(key);
    }
  }
}
