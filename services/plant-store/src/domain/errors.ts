import { createError } from '@plant/shared/api';

const DuplicatePlantIdBase = createError(
  'DuplicatePlantId',
  409,
  'A plant with this id already exists',
);

/** The tenant already has a plant with this id (ids are unique per tenant). */
export class DuplicatePlantId extends DuplicatePlantIdBase {
  constructor(id: string) {
    super(`A plant with id ${id} already exists`);
  }
}
