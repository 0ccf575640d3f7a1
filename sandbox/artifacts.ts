import { isWithin, VirtualRoot } from "./virtual-paths.js";

/** The artifact `write_file` and `edit_file` attach to their ToolMessage. */
export interface FileWriteArtifact {
  kind: "file_write";
  /** The virtual path written. */
  path: string;
}

/** True for a {@link FileWriteArtifact}. */
export function isFileWriteArtifact(value: unknown): value is FileWriteArtifact {
  const candidate = value as Partial<FileWriteArtifact> | null | undefined;
  return candidate?.kind === "file_write" && typeof candidate.path === "string";
}

/** True for a virtual path in the outputs folder (what a parent sees of a child's work). */
export function isOutputPath(virtualPath: string): boolean {
  return isWithin(virtualPath, VirtualRoot.outputs) && virtualPath !== VirtualRoot.outputs;
}
