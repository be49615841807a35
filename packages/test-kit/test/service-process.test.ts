import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { freePort, spawnServer } from '../src/index.js';

const script = join(import.meta.dirname, 'fixtures/tiny-server.mjs');
const logDir = mkdtempSync(join(tmpdir(), 'test-kit-logs-'));

afterAll(() => rmSync(logDir, { recursive: true, force: true }));

describe('spawnServer', () => {
  test('When its output goes to a log file, then it is ready at the listening line, and flushedLogs reads the file up to a request made now', async () => {
    const server = await spawnServer({ name: 'tiny-file', script, env: {}, logDir });
    try {
      expect(server.logs).toEqual(['starting', `{"msg":"listening","port":${server.port}}`]);
      expect(server.pid).toBe(server.child.pid);
      await fetch(`${server.url}/first`);

      const logs = await server.flushedLogs();

      expect(logs.slice(0, 3)).toEqual([
        'starting',
        `{"msg":"listening","port":${server.port}}`,
        '{"msg":"request","reqId":null,"path":"/first"}',
      ]);
      expect(logs[3]).toMatch(
        /^\{"msg":"request","reqId":"log-flush-[0-9a-f-]+","path":"\/log-flush-marker"\}$/,
      );
      expect(readFileSync(join(logDir, 'tiny-file.log'), 'utf8')).toBe(`${logs.join('\n')}\n`);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test('When its LOG_LEVEL hides the listening line, then it is ready once /healthz answers on the PORT it was given', async () => {
    const port = await freePort();
    const server = await spawnServer({
      name: 'tiny-quiet',
      script,
      env: { LOG_LEVEL: 'warn', PORT: String(port) },
    });
    try {
      expect([server.port, server.url]).toEqual([port, `http://127.0.0.1:${port}`]);
      expect(server.logs.some((line) => line.includes('listening'))).toBe(false);
    } finally {
      await server.stop();
    }
  });

  test('When it has a management port, then its address comes from the listening line, or, quiet, from /healthz answering on the MANAGEMENT_PORT it was given', async () => {
    const told = await spawnServer({ name: 'tiny-managed', script, env: { MANAGEMENT_PORT: '0' } });
    const [port, managementPort] = [await freePort(), await freePort()];
    const quiet = await spawnServer({
      name: 'tiny-managed-quiet',
      script,
      env: { LOG_LEVEL: 'warn', PORT: String(port), MANAGEMENT_PORT: String(managementPort) },
    });
    try {
      expect(told.managementUrl).toBe(`http://127.0.0.1:${told.managementPort}`);
      expect(told.managementPort).not.toBe(told.port);
      expect([quiet.port, quiet.managementPort, quiet.managementUrl]).toEqual([
        port,
        managementPort,
        `http://127.0.0.1:${managementPort}`,
      ]);
      expect((await fetch(`${quiet.url}/healthz`)).status).toBe(404);
    } finally {
      await Promise.all([told.stop(), quiet.stop()]);
    }
    await expect(
      spawnServer({
        name: 'tiny-managed-portless',
        script,
        env: { LOG_LEVEL: 'warn', PORT: String(port), MANAGEMENT_PORT: '0' },
      }),
    ).rejects.toThrow('give it a PORT and a MANAGEMENT_PORT');
  });

  test('When its LOG_LEVEL hides the listening line and it has no PORT, then it is not started', async () => {
    await expect(
      spawnServer({ name: 'tiny-portless', script, env: { LOG_LEVEL: 'warn' }, logDir }),
    ).rejects.toThrow(
      'tiny-portless: at LOG_LEVEL=warn it never says where it listens; give it a PORT',
    );
    expect(existsSync(join(logDir, 'tiny-portless.log'))).toBe(false);
  });

  test('When it exits before listening, then the error names the exit code and carries its output, from a pipe or a log file', async () => {
    const env = { EXIT_BEFORE_LISTENING: '1' };
    const expected =
      /exited with 1 before listening:\nconfiguration error: TINY is required but not set$/;
    await expect(spawnServer({ name: 'tiny-piped', script, env })).rejects.toThrow(expected);
    await expect(spawnServer({ name: 'tiny-logged', script, env, logDir })).rejects.toThrow(
      expected,
    );
  });
});
