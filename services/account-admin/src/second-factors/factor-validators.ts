import { z } from 'zod';
import { AppError } from '@plant/shared/api';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** People and factors are named by UUIDs: anything else names nothing (404), never reaches the realm. */
export const UserPath = z.object({ id: z.string().regex(UUID) });
export const FactorPath = z.object({ factor_id: z.string().regex(UUID) });

export function assertUuid(value: string, what: 'User' | 'Factor'): void {
  if (!UUID.test(value)) throw new AppError(404, `${what} not found`);
}

export const PeopleSettingsBody = z.strictObject(
  {
    require_admin_second_factor: z.boolean({
      error: 'require_admin_second_factor must be true or false',
    }),
  },
  { error: 'body must be a JSON object with require_admin_second_factor only' },
);
