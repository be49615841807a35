/**
 * Each service's V8 heap, sized for its pod (docs/decisions/0034, 0047): its image sets
 * NODE_OPTIONS, the suite and the bench start it with that same value, and the heap's bound
 * (the image's, or the container's own NODE_OPTIONS where an overlay resizes it) plus what the
 * process holds outside the heap fits the memory limit of every overlay.
 */
import { describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { imageNodeOptions } from '@plant/test-kit';
import { environmentOf, loadCompose } from '../src/compose-checks.js';
import { imageEnv } from '../src/dockerfile-checks.js';
import { containerEnv } from '../src/k8s-env.js';
import { repoRoot, SERVICES } from '../src/repo-paths.js';
import { base, containerOf, OVERLAYS } from './helpers/rendered.js';

const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
const imageOptionsOf = (service: string) => imageEnv(dockerfile, service).get('NODE_OPTIONS') ?? '';
const imageOptions = imageOptionsOf('token-service');
/**
 * What a service holds outside the V8 heap (code, OpenSSL, sockets, malloc): 60–110 MB after
 * load in the soaks on Node 24 (docs/performance.md, "Memory"), with room to spare.
 */
const OUTSIDE_HEAP_MB = 160;

/** `--flag=N` of a NODE_OPTIONS string, in MB. */
const flagMb = (options: string, flag: string) => {
  const match = new RegExp(`(?:^|\\s)--${flag}=(\\d+)(?:\\s|$)`).exec(options);
  return match ? Number(match[1]) : undefined;
};
/** The heap's bound: the old generation and three semi-spaces (two, and the young large objects). */
const heapBoundMb = (options: string) =>
  flagMb(options, 'max-old-space-size')! + 3 * flagMb(options, 'max-semi-space-size')!;
const mebibytes = (quantity: string) => {
  const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!match) throw new Error(`unexpected memory quantity ${quantity}`);
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
};

/** What each image sets: 16 MB semi-spaces, and the old generation Node gives its pod. */
const IMAGE_HEAP: Record<string, { semi: number; old: number }> = {
  'token-service': { semi: 16, old: 384 }, // a 768 Mi pod
  'plant-store': { semi: 16, old: 256 }, // 512 Mi
  'account-admin': { semi: 16, old: 256 }, // 512 Mi
};

describe("each service's heap", () => {
  test.each(SERVICES)(
    'When the %s image is built, then NODE_OPTIONS bounds both generations: 16 MB semi-spaces and the old generation Node gives its pod',
    (service) => {
      const options = imageOptionsOf(service);
      expect(flagMb(options, 'max-semi-space-size')).toBe(IMAGE_HEAP[service]!.semi);
      expect(flagMb(options, 'max-old-space-size')).toBe(IMAGE_HEAP[service]!.old);
    },
  );

  test.each(SERVICES)(
    'When the pinned node runs with the %s image options, then its heap limit is the bound the checks below count',
    (service) => {
      const options = imageOptionsOf(service);
      const limit = execFileSync(
        process.execPath,
        ['-p', 'require("node:v8").getHeapStatistics().heap_size_limit / 2 ** 20'],
        { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: options } },
      );
      expect(Number(limit)).toBe(heapBoundMb(options));
    },
  );

  test.each(
    SERVICES.flatMap((service) =>
      Object.entries({ base, ...OVERLAYS }).map(
        ([name, objects]) => [service, name, objects] as const,
      ),
    ),
  )(
    'When %s is deployed by %s, then its heap bound and what it holds outside the heap fit its memory limit (a container NODE_OPTIONS replaces the image one and must bound both generations)',
    (service, _name, objects) => {
      const container = containerOf(objects, service);
      const limitMb = mebibytes(String(container.resources!.limits!.memory));
      const own = (container.env ?? []).find((e) => e.name === 'NODE_OPTIONS');
      // From a ConfigMap it would change every service's heap at once: only the container's own value.
      expect(containerEnv(container, objects).env.get('NODE_OPTIONS')?.from ?? 'value').toBe(
        'value',
      );
      const options = own?.value ?? imageOptionsOf(service);
      expect(flagMb(options, 'max-semi-space-size')).toBeDefined();
      expect(flagMb(options, 'max-old-space-size')).toBeDefined();
      expect(heapBoundMb(options) + OUTSIDE_HEAP_MB).toBeLessThanOrEqual(limitMb);
    },
  );

  test.each(SERVICES)(
    'When compose runs the %s image, then it keeps the image NODE_OPTIONS',
    (service) => {
      const compose = loadCompose(join(repoRoot, 'docker-compose.yml'));
      expect(environmentOf(compose.services[service]!).has('NODE_OPTIONS')).toBe(false);
    },
  );

  test('When a limit is too small for the heap, then the bound check refuses it', () => {
    expect(heapBoundMb(imageOptions) + OUTSIDE_HEAP_MB).toBeGreaterThan(512);
    expect(heapBoundMb('--max-semi-space-size=16 --max-old-space-size=512')).toBe(560);
  });

  test.each(SERVICES)(
    'When the suite or the bench starts %s, then it gives it its image NODE_OPTIONS, read as the Dockerfile parser reads them',
    (service) => {
      expect(imageNodeOptions(service)).toBe(imageEnv(dockerfile, service).get('NODE_OPTIONS'));
    },
  );
});
