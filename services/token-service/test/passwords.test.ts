import { describe, expect, test } from '@jest/globals';
import { defaultPasswordCheckSlots, DUMMY_PASSWORD_HASH, hashPassword, PasswordCheckSlots, verifyPassword } from '../src/domain/passwords.js';

describe('password checks', () => {
  test('When all slots are taken, then the next take is refused until one is given back; the count never goes below zero', () => {
    const slots = new PasswordCheckSlots(2);

    const taken = [slots.take(), slots.take(), slots.take()];
    const fullWhenTaken = slots.full;
    slots.give();
    const afterGive = slots.take();
    slots.give();
    slots.give();
    slots.give();
    slots.give();
    const again = [slots.take(), slots.take(), slots.take()];

    expect({ taken, fullWhenTaken, afterGive, again }).toEqual({ taken: [true, true, false], fullWhenTaken: true, afterGive: true, again: [true, true, false] });
  });

  test('When the slots are not configured, then two pool threads are kept for signing and one core for the event loop, with at least one slot', () => {
    expect([defaultPasswordCheckSlots(4, 2), defaultPasswordCheckSlots(4, 8), defaultPasswordCheckSlots(16, 8), defaultPasswordCheckSlots(2, 1), defaultPasswordCheckSlots(64, 64)]).toEqual([1, 2, 7, 1, 62]);
  });

  test('When an unknown email is checked against the dummy hash, then it has the parameters of a real hash and no password matches it', async () => {
    const real = await hashPassword('a password');
    const params = (stored: string) => stored.split('$').slice(0, 4);

    expect(params(DUMMY_PASSWORD_HASH)).toEqual(params(real));
    expect(await verifyPassword('a password', DUMMY_PASSWORD_HASH)).toBe(false);
    expect(await verifyPassword('', DUMMY_PASSWORD_HASH)).toBe(false);
    expect(await verifyPassword('a password', real)).toBe(true);
  });
});
