import type { Plant } from '@plant/shared/api';

/** The wire Plant: name and, when set, tag. The id is accepted but never returned (seed). */
export function toPlant({ name, tag }: { name: string; tag?: string | null | undefined }): Plant {
  return tag === undefined || tag === null ? { name } : { name, tag };
}
