import { join } from "node:path";
import { type ProcessSettings, processLimits, settingsFileReader } from "./limits.js";

/** Where the process-wide settings come from (the matching options of `createRuntime`). */
export interface SettingsSources {
  env: NodeJS.ProcessEnv;
  /** The data folder, where `settings.json` is looked for unless `SUBAGENT_GRAPH_SETTINGS` names a file. */
  dataDir: string;
  /** The runtime's `limits` option: values, or a function called again on each read. */
  overrides?: Partial<ProcessSettings> | (() => Partial<ProcessSettings>);
  warn(message: string): void;
}

/**
 * The current process-wide settings, read again on every call (every dispatch and model call):
 * built-ins < environment < settings file < the `limits` option. A bad environment value is
 * reported once, not at every call.
 */
export function settingsSource(sources: SettingsSources): () => ProcessSettings {
  const { env, overrides, warn } = sources;
  const settingsFile = settingsFileReader(
    env.SUBAGENT_GRAPH_SETTINGS?.trim() || join(sources.dataDir, "settings.json"),
    warn,
  );
  const reported = new Set<string>();
  const warnOnce = (message: string) => {
    if (reported.has(message)) return;
    reported.add(message);
    warn(message);
  };
  return () => {
    const current = typeof overrides === "function" ? overrides() : overrides;
    return processLimits(env, { ...settingsFile(), ...current }, warnOnce);
  };
}
