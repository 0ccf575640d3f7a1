import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { currentProcess, livenessOf, startTimeOf } from "../../util/process-identity.js";

/** A real child process that waits until killed. */
async function startIdle() {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {
    stdio: "ignore",
  });
  await once(child, "spawn");
  return child;
}

describe("process identity", () => {
  const self = currentProcess("instance-self");

  it("names this process with a scope its pids compare in and its start time", () => {
    expect(self.pid).toBe(process.pid);
    expect(self.host).not.toBe("");
    if (process.platform === "linux") {
      expect(self.pidScope).toMatch(/^linux:[0-9a-f-]+:pid:\[\d+\]$/);
      expect(self.pidStart).toMatch(/^\d+$/);
    }
  });

  it("tells a running process from one that has exited", async () => {
    const child = await startIdle();
    const pid = child.pid ?? -1;
    const other = currentProcess("instance-child");
    // The child's identity as its own row would record it: same scope, its own pid and start.
    const holder = { ...other, pid, pidStart: startTimeOf(pid) };
    expect(livenessOf(holder, self)).toBe("alive");
    child.kill("SIGKILL");
    await once(child, "exit");
    expect(livenessOf(holder, self)).toBe("dead");
  });

  it("takes a pid now used by a process started at another time for a dead holder's", async () => {
    const child = await startIdle();
    try {
      const pid = child.pid ?? -1;
      const reused = { pid, pidScope: self.pidScope, pidStart: "1" };
      expect(livenessOf(reused, self)).toBe(process.platform === "linux" ? "dead" : "alive");
    } finally {
      child.kill("SIGKILL");
      await once(child, "exit");
    }
  });

  it("takes a zombie (exited, not yet collected by its parent) for dead", async () => {
    // sh starts `sleep 0` in the background and becomes `sleep 30`, which never collects it.
    const parent = spawn("sh", ["-c", "sleep 0 & echo $!; exec sleep 30"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    try {
      const [line] = (await once(parent.stdout, "data")) as [Buffer];
      const pid = Number(String(line).trim());
      const zombie = { pid, pidScope: self.pidScope, pidStart: "" };
      const deadline = Date.now() + 5_000;
      while (livenessOf(zombie, self) !== "dead" && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(livenessOf(zombie, self)).toBe(process.platform === "linux" ? "dead" : "alive");
    } finally {
      parent.kill("SIGKILL");
      await once(parent, "exit");
    }
  });

  it("never judges a process of another scope (machine, container, boot) by its pid", async () => {
    const child = await startIdle();
    child.kill("SIGKILL");
    await once(child, "exit");
    const elsewhere = { pid: child.pid ?? -1, pidScope: "linux:other-boot:pid:[1]", pidStart: "" };
    expect(livenessOf(elsewhere, self)).toBe("unknown");
  });

  it("takes another runtime of this very process for alive", () => {
    expect(livenessOf({ ...currentProcess("instance-other") }, self)).toBe("alive");
  });
});
