import { tool } from "@langchain/core/tools";
import { z } from "zod";

/** `current_time`: the current date and time, optionally in an IANA time zone. */
export const currentTimeTool = tool(
  async ({ time_zone }: { time_zone?: string | undefined }) => {
    const now = new Date();
    if (!time_zone) return now.toISOString();
    try {
      const local = new Intl.DateTimeFormat("en-CA", {
        timeZone: time_zone,
        dateStyle: "short",
        timeStyle: "long",
      }).format(now);
      return `${local} (${time_zone})`;
    } catch {
      return `unknown time zone ${JSON.stringify(time_zone)}: use an IANA name such as "Europe/Paris"`;
    }
  },
  {
    name: "current_time",
    description:
      "Returns the current date and time (ISO 8601, or local time in an IANA time zone).",
    schema: z.object({
      time_zone: z.string().optional().describe('IANA time zone, e.g. "Asia/Shanghai"'),
    }),
  },
);

/** The tools every runtime registers. */
export function builtinTools() {
  return [currentTimeTool];
}
