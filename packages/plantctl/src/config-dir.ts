/**
 * Where plantctl keeps what it needs between runs, and how it writes it. One directory per
 * user (`PLANTCTL_CONFIG_DIR`, else `$XDG_CONFIG_HOME/plantctl`, `~/.config/plantctl`, or
 * `%APPDATA%\plantctl` on Windows), mode 0700; inside it every file holding a token or a key is
 * written 0600 by a rename of a fresh file, so no reader ever sees a half-written or wider file.
 */
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PLANTCTL_CONFIG_DIR) return env.PLANTCTL_CONFIG_DIR;
  if (process.platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'plantctl');
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'plantctl');
}

/** Writes `data` to `path` readable by its owner only (0600), replacing the file atomically. */
export async function writePrivateFile(path: string, data: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temp, data, { mode: 0o600, flag: 'wx' });
  // The umask never widens 0600, but a file system that ignores the mode argument is fixed here.
  await chmod(temp, 0o600);
  await rename(temp, path);
}

/** The parsed JSON at `path`, or undefined when there is no file. */
export async function readJsonFile<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export async function removeFile(path: string): Promise<void> {
  await rm(path, { force: true });
}
