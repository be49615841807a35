/**
 * How the client's management calls reach the token service: one JSON request through
 * `callInternalApi` (credentials, request id, timeout), a non-2xx answer turned into an
 * `InternalApiError` with the status and the answer's message, and the realm paths the calls
 * are made on.
 */
import {
  answerMessageOf,
  callInternalApi,
  InternalApiError,
  type InternalApiAnswer,
  type InternalApiTarget,
} from '@plant/resource-auth/platform/internal-api-request';
import { realmPath as realm } from '@plant/resource-auth/platform/token-service-reader';
import { ifMatchHeader, takePrecondition } from '../http/precondition.js';

export { realm };

/** What a call module is given by the client: the request, and the client's error mapping around it. */
export interface ManagementApi {
  /** A management call: the 2xx body (none for 204), else an `InternalApiError`. */
  json<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** Runs `call`, a failure turned into the caller's own error (`mapError`). */
  mapped<T>(call: () => Promise<T>): Promise<T>;
}

const readsAnyButNoContent = (status: number) => status !== 204;
export const seg = encodeURIComponent;
export const account = (tenant: string, clientId: string) =>
  `${realm(tenant)}/service-accounts/${seg(clientId)}`;

/**
 * A management call: the 2xx body (none for 204), else an `InternalApiError` with the status and
 * the answer's message. The request's first change carries its `If-Match`, if any
 * (http/precondition.ts): the token service decides it in the change's transaction.
 */
export async function managementJson<T>(
  target: InternalApiTarget,
  timeoutMs: number,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const precondition = method === 'GET' ? undefined : takePrecondition();
  const answer: InternalApiAnswer = await callInternalApi(target, {
    method,
    path,
    body,
    ...(precondition === undefined ? {} : { headers: { 'if-match': ifMatchHeader(precondition) } }),
    timeoutMs,
    readsBody: readsAnyButNoContent,
  });
  const { status } = answer;
  if (status === 204) return undefined as T;
  if (status >= 200 && status < 300) return answer.body as T;
  const answerMessage = answerMessageOf(answer.body);
  throw new InternalApiError(`token service answered ${status}`, {
    status,
    ...(answerMessage === undefined ? {} : { answerMessage }),
  });
}
