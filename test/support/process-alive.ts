/**
 * Whether process `pid` exists (signal 0 checks without signalling; EPERM means it exists under
 * another user). A child that ended is reaped by Node, so its pid is gone.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
