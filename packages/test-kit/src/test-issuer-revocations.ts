/**
 * The test issuer's revocation routes (test-issuer.ts), the ones resource servers read, over the
 * entries a test records with `revoke`: `GET /internal/v1/revocations` (the snapshot, each entry
 * needed for 360 s), `GET /internal/v1/revocations/changes?after=` (the change feed, one page)
 * and `GET /internal/v1/realms/:tenant/principals/:sub` (every principal of a known realm exists
 * at version 1 unless revoked). Nothing expires and the feed is never truncated: tests that need
 * those use resource-auth's fake internal API (its test/revocation-support.ts).
 */

/** A route's answer: the status and the JSON body. */
export interface IssuerReply {
  status: number;
  body: unknown;
}

interface RecordedRevocation {
  tenant: string;
  sub: string;
  version: number;
  deleted: boolean;
  /** Where the change stands in the feed (1, 2, …). */
  position: number;
}

export class IssuerRevocations {
  private readonly entries = new Map<string, RecordedRevocation>();
  private head = 0;

  /** Records a bumped version or a deletion of `tenant/sub` at the head of the feed. */
  revoke(
    tenant: string,
    sub: string,
    { version, deleted }: { version?: number; deleted?: boolean },
  ): void {
    const key = `${tenant}/${sub}`;
    const current = this.entries.get(key) ?? {
      tenant,
      sub,
      version: 1,
      deleted: false,
      position: 0,
    };
    this.head += 1;
    this.entries.set(key, {
      tenant,
      sub,
      version: Math.max(current.version, version ?? 1),
      deleted: current.deleted || deleted === true,
      position: this.head,
    });
  }

  /** The answer to a GET of `url` if it is a revocation route, else undefined. */
  answer(url: string, isKnownRealm: (tenant: string) => boolean): IssuerReply | undefined {
    if (url === '/internal/v1/revocations')
      return { status: 200, body: { position: String(this.head), entries: this.liveAfter(0) } };
    const changes = /^\/internal\/v1\/revocations\/changes\?after=(\d+)$/.exec(url);
    if (changes) {
      const after = Number(changes[1]);
      if (after > this.head) return { status: 200, body: { reset: true } };
      return {
        status: 200,
        body: {
          reset: false,
          position: String(this.head),
          more: false,
          entries: this.liveAfter(after),
        },
      };
    }
    const principal = /^\/internal\/v1\/realms\/([^/?]+)\/principals\/([^/?]+)$/.exec(url);
    if (principal)
      return this.principal(
        decodeURIComponent(principal[1]!),
        decodeURIComponent(principal[2]!),
        isKnownRealm,
      );
    return undefined;
  }

  private principal(
    tenant: string,
    sub: string,
    isKnownRealm: (tenant: string) => boolean,
  ): IssuerReply {
    if (!isKnownRealm(tenant))
      return { status: 404, body: { error: 404, message: `Unknown realm ${tenant}` } };
    const found = this.entries.get(`${tenant}/${sub}`);
    return {
      status: 200,
      body: { tenant, sub, version: found?.version ?? 1, deleted: found?.deleted ?? false },
    };
  }

  private liveAfter(after: number) {
    return [...this.entries.values()]
      .filter((e) => e.position > after)
      .map(({ tenant, sub, version, deleted }) => ({ tenant, sub, version, deleted, ttl: 360 }));
  }
}
