/**
 * OpenTelemetry's context manager on the request context's `AsyncLocalStorage` (loaded only
 * when tracing is on). The SDK's own manager keeps the active OTel context in a storage of its
 * own, so each request would enter two (two `run`s, two frames); on Node 20, where every storage
 * in use was copied into every promise, that made every request dearer, sampled or not
 * (docs/performance.md, "Tracing"). Here the OTel context is a field of the request's store:
 * one storage, one `run` per request (the request observer sets the id and the span together),
 * and what keeps the request id in a log line keeps the trace too.
 *
 * Binding functions and event emitters is the SDK manager's own code (inherited); it calls
 * `with`, which is ours. Its constructor makes a storage that is never entered, which costs
 * nothing.
 */
import type { Context, ContextManagementToken } from '@opentelemetry/api';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { requestContext } from '../logging/index.js';

export class RequestContextManager extends AsyncLocalStorageContextManager {
  override active(): Context {
    return requestContext.getStore()?.trace ?? ROOT_CONTEXT;
  }

  override with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const store = requestContext.getStore();
    const call = thisArg == null ? fn : (fn.bind(thisArg) as F);
    // Already active (a span's callback inside its own span): no new store, no new frame.
    if (store?.trace === context) return call(...args);
    return requestContext.run({ requestId: store?.requestId, trace: context }, call, ...args);
  }

  override attach(context: Context): ContextManagementToken {
    const previous = requestContext.getStore();
    requestContext.enterWith({ requestId: previous?.requestId, trace: context });
    let disposed = false;
    return {
      dispose() {
        if (disposed) return;
        disposed = true;
        requestContext.enterWith(previous ?? { requestId: undefined, trace: undefined });
      },
    };
  }
}
