/**
 * The token service's error catalogue (src/platform/errors.ts): every error class lives there,
 * and a wire error declared with its `expose` flag answers exactly what the shared
 * `createError` class of the same code, status and message answers.
 */
import { describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppError, createError } from '@plant/shared/api';
import { toErrorResponse } from '@plant/shared/http';
import { errors as oidcErrors } from 'oidc-provider';
import * as catalogue from '../src/platform/errors.js';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

type Entry = [string, unknown];
const classes = (Object.entries(catalogue) as Entry[]).filter(
  (entry): entry is [string, new (...args: never[]) => Error] => typeof entry[1] === 'function',
);
const isSubclass = (cls: unknown, base: new (...args: never[]) => unknown): boolean =>
  typeof cls === 'function' && cls.prototype instanceof base;

/** The JSON APIs' errors that take (message?, options?): all but the ones with their own constructor. */
const plainWire = classes.filter(
  ([name, cls]) => isSubclass(cls, AppError) && name !== 'TooManyFailedAuthentications',
) as Entry[] as Array<[string, new (message?: string, options?: object) => AppError]>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe('the error catalogue', () => {
  test('every error class of the service is defined in platform/errors.ts', () => {
    const elsewhere = sourceFiles(SRC)
      .filter((file) => relative(SRC, file) !== join('platform', 'errors.ts'))
      .filter((file) =>
        /class \w+ extends (\w+\.)?\w*Error\b|createError\(/.test(readFileSync(file, 'utf8')),
      )
      .map((file) => relative(SRC, file));
    expect(elsewhere).toEqual([]);
  });

  test('each class is named as it is exported (the code)', () => {
    for (const [name, cls] of classes) expect(cls.name).toBe(name);
  });

  test('each class is a JSON API error, a token endpoint error, or internal', () => {
    for (const [, cls] of classes)
      expect(
        isSubclass(cls, AppError) ||
          isSubclass(cls, oidcErrors.OIDCProviderError) ||
          isSubclass(cls, Error),
      ).toBe(true);
  });

  test.each(plainWire)('%s answers what createError of its code answers', (name, cls) => {
    const error = new cls();
    const Reference = createError(name, error.status, error.message);
    const reference = new Reference();
    expect(error.name).toBe(reference.name);
    expect(error.expose).toBe(reference.expose);
    expect(toErrorResponse(error)).toEqual(toErrorResponse(reference));
    const told = { headers: { 'retry-after': '1' } };
    expect(toErrorResponse(new cls('told', told))).toEqual(
      toErrorResponse(new Reference('told', told)),
    );
    expect(toErrorResponse(new cls('hidden', { expose: false }))).toEqual(
      toErrorResponse(new Reference('hidden', { expose: false })),
    );
  });

  test('the expose flag decides whether the message is shown', () => {
    const shown = toErrorResponse(new catalogue.StreamNotFound('Stream 7 not found'));
    expect(shown.body).toEqual({ error: 404, message: 'Stream 7 not found' });
    const hidden = toErrorResponse(new catalogue.StreamNotFound('secret', { expose: false }));
    expect(hidden.body).toEqual({ error: 404, message: 'Not found' });
  });

  test('TooManyFailedAuthentications: 429, its message, Retry-After', () => {
    const mapped = toErrorResponse(new catalogue.TooManyFailedAuthentications(7));
    expect(mapped).toEqual({
      status: 429,
      headers: { 'retry-after': '7' },
      body: { error: 429, message: 'too many failed client authentications; retry later' },
      unexpected: false,
    });
  });
});
