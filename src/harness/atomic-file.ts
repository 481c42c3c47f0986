/** Writing a file so that a crash leaves either the old content or the new, never a torn mix. */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `text` to `path` atomically: into a temporary file next to it, fsynced, then renamed over
 * `path`, then the folder fsynced (so the rename itself survives power loss). A reader, or the process
 * after a crash at any point, sees the complete old file or the complete new one.
 * @example
 * writeFileAtomic('.envharness/agent.json', JSON.stringify(state));
 */
export function writeFileAtomic(path: string, text: string): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const fd = openSync(temp, 'w', 0o644);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  // The directory entry: without this the rename may be lost on power loss (the data would not be torn).
  try {
    const dir = openSync(dirname(path), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  } catch {
    // Some filesystems refuse fsync on a directory; the file itself is already whole.
  }
}
