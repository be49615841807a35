import { describe, expect, test } from '@jest/globals';
import { keyChangeMessage, parseKeyChangeMessage } from '../src/realms/realm-naming.js';

// Anyone who can publish on the Redis channel can send anything: a replica reloads a realm only for a well-formed message.
describe('the key-change message', () => {
  test('When a message is made for a realm, then parsing it gives that realm back', () => {
    expect(parseKeyChangeMessage(keyChangeMessage('acme'))).toBe('acme');
  });

  test.each([
    '',
    'not json',
    'null',
    '[]',
    '"acme"',
    '{}',
    '{"tenant":5}',
    '{"tenant":null}',
    '{"tenant":{"toString":"x"}}',
  ])('When %j arrives on the channel, then it names no realm', (message) => {
    expect(parseKeyChangeMessage(message)).toBeUndefined();
  });
});
