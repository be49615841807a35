import { afterEach, describe, expect, jest, test } from '@jest/globals';
import { createLogger } from '@plant/shared/logging';
import { RealmDirectory } from '../src/bearer/realm-directory.js';

const logger = createLogger({ name: 'realm-directory-test', level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A stand-in realm list: what exists now, every load it served, and how many ran at once. */
function source(initial: string[] = []) {
  const realms = new Set(initial);
  const state = { loads: 0, running: 0, maxRunning: 0, failing: false, latencyMs: 5 };
  const load = async (): Promise<string[]> => {
    state.loads += 1;
    state.running += 1;
    state.maxRunning = Math.max(state.maxRunning, state.running);
    // What exists when the token service reads it: the request is sent before this await.
    const snapshot = [...realms];
    await sleep(state.latencyMs);
    state.running -= 1;
    if (state.failing) throw new Error('token service down');
    return snapshot;
  };
  return { realms, state, load };
}

const opened: RealmDirectory[] = [];
afterEach(() => {
  for (const directory of opened.splice(0)) directory.close();
  jest.useRealTimers();
});

/** One load at once, then `loadsPerSecond`: a load interval of 1000 / loadsPerSecond ms. */
function directoryOn(
  load: () => Promise<string[]>,
  { loadBurst = 1, loadsPerSecond = 10 } = {},
): RealmDirectory {
  const directory = new RealmDirectory({ load, logger, loadBurst, loadsPerSecond });
  opened.push(directory);
  return directory;
}

describe('RealmDirectory (which realms exist)', () => {
  test('When a listed realm is confirmed, then it is known, and later has() answers without a load', async () => {
    const src = source(['acme', 'globex']);
    const directory = directoryOn(src.load);

    expect(directory.has('acme')).toBe(false);
    expect(await directory.confirm('acme')).toBe('known');
    expect([directory.has('acme'), directory.has('globex'), directory.has('initech')]).toEqual([
      true,
      true,
      false,
    ]);
    expect(src.state.loads).toBe(1);
  });

  test('When 1,000 different unknown realms are confirmed at once, then each is unknown and they share two loads (the one they found starting and one after it)', async () => {
    const src = source(['acme']);
    const directory = directoryOn(src.load);

    const verdicts = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => directory.confirm(`zz-${i}`)),
    );

    expect(new Set(verdicts)).toEqual(new Set(['unknown']));
    expect(src.state.loads).toBe(2);
  });

  test('When unknown realms keep coming for a second, then loads stay within the budget (the burst, then the rate) and never overlap', async () => {
    // jest's clock drives the budget, the loads' latency and the arrivals: exactly 500 misses in
    // one second, however loaded the machine (on the real clock a busy machine sent a few dozen).
    jest.useFakeTimers();
    const src = source(['acme']);
    src.state.latencyMs = 30;
    const directory = directoryOn(src.load, { loadBurst: 3, loadsPerSecond: 10 });
    const verdicts: Array<Promise<string>> = [];

    for (let ms = 0; ms < 1000; ms += 2) {
      verdicts.push(directory.confirm(`zz-${ms}`));
      await jest.advanceTimersByTimeAsync(2);
    }
    const loadsInTheSecond = src.state.loads;
    // The misses still waiting share one more load.
    await jest.advanceTimersByTimeAsync(1000);

    expect(new Set(await Promise.all(verdicts))).toEqual(new Set(['unknown']));
    expect(verdicts.length).toBe(500);
    // The budget of one second: the burst and ten more (each load waits for the one before, so
    // a few ms of each interval go unspent); the misses still waiting after it, one load more.
    expect(loadsInTheSecond).toBeGreaterThanOrEqual(3 + 9);
    expect(loadsInTheSecond).toBeLessThanOrEqual(3 + 10);
    expect(src.state.loads).toBe(loadsInTheSecond + 1);
    expect(src.state.maxRunning).toBe(1);
  });

  test('When new realms show up now and then, then each first token loads the list at once, within the burst', async () => {
    const src = source(['acme']);
    src.state.latencyMs = 0;
    const directory = directoryOn(src.load, { loadBurst: 3, loadsPerSecond: 0.001 });

    const verdicts = [];
    for (const name of ['r1', 'r2', 'r3']) {
      src.realms.add(name);
      verdicts.push(await directory.confirm(name));
    }

    expect({ verdicts, loads: src.state.loads }).toEqual({
      verdicts: ['known', 'known', 'known'],
      loads: 3,
    });
  });

  test('When a realm is created just after a load, then its first token waits for the next load and the realm is known', async () => {
    const src = source(['acme']);
    const directory = directoryOn(src.load, { loadsPerSecond: 3 });
    expect(await directory.confirm('zz-first')).toBe('unknown');

    src.realms.add('brand-new');

    expect(directory.has('brand-new')).toBe(false);
    expect(await directory.confirm('brand-new')).toBe('known');
    expect(src.state.loads).toBe(2);
  });

  test('When a load is in flight as the realm is created, then the miss does not trust that load and waits for the next', async () => {
    const src = source(['acme']);
    src.state.latencyMs = 50;
    const directory = directoryOn(src.load, { loadsPerSecond: 100 });
    const first = directory.confirm('zz-any');
    await sleep(5);
    src.realms.add('created-meanwhile');

    const verdict = await directory.confirm('created-meanwhile');

    expect({ first: await first, verdict, loads: src.state.loads }).toEqual({
      first: 'unknown',
      verdict: 'known',
      loads: 2,
    });
  });

  test('When the realm list cannot be loaded, then misses are unavailable, and a later miss loads again once the interval has passed', async () => {
    const src = source(['acme']);
    src.state.failing = true;
    const directory = directoryOn(src.load);

    expect(await Promise.all([directory.confirm('acme'), directory.confirm('zz-1')])).toEqual([
      'unavailable',
      'unavailable',
    ]);
    src.state.failing = false;
    expect(await directory.confirm('acme')).toBe('known');
  });

  test('When a load no longer lists a realm, or its keys answered 404, then it is no longer known: the set follows the realms that exist', async () => {
    const src = source(['acme', 'globex', 'initech']);
    const directory = directoryOn(src.load, { loadBurst: 2 });
    expect(await directory.confirm('acme')).toBe('known');

    directory.forget('globex');
    expect([directory.has('acme'), directory.has('globex'), directory.has('initech')]).toEqual([
      true,
      false,
      true,
    ]);

    src.realms.delete('acme');
    expect(await directory.confirm('zz-x')).toBe('unknown');
    expect([directory.has('acme'), directory.has('globex'), directory.has('initech')]).toEqual([
      false,
      true,
      true,
    ]);
  });

  test('When the directory is closed, then waiting misses are answered unavailable and no load starts', async () => {
    const src = source(['acme']);
    const directory = directoryOn(src.load, { loadsPerSecond: 0.001 });
    expect(await directory.confirm('zz-1')).toBe('unknown');
    const waiting = directory.confirm('acme');

    directory.close();

    expect(await waiting).toBe('unavailable');
    expect(await directory.confirm('acme')).toBe('unavailable');
    expect(src.state.loads).toBe(1);
  });
});
