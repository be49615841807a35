import { z } from 'zod';
import { SIGNING_ALGORITHMS } from './signing-keys.js';

export const SigningAlgorithmSchema = z.enum(SIGNING_ALGORITHMS, { error: `alg must be one of ${SIGNING_ALGORITHMS.map((alg) => `"${alg}"`).join(', ')}` });

export const SetSigningAlgorithmSchema = z.object({ alg: SigningAlgorithmSchema }, { error: 'body must be a JSON object' });
