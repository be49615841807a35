/**
 * Where the container images of an overlay are named: the kustomization's `images:`, and
 * nowhere else.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { podTemplates, type K8sKind, type K8sObject } from './k8s-objects.js';

/** An `images:` entry of a kustomization. */
export interface KustomizeImage {
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

/** The `images:` of a kustomization directory's kustomization.yaml. */
export function kustomizeImages(dir: string): KustomizeImage[] {
  const doc = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as {
    images?: KustomizeImage[];
  };
  return doc.images ?? [];
}

/** Every container image of every Deployment and Job (init containers too), with where it is. */
export function containerImages(objects: K8sObject[]): Array<{ where: string; image: string }> {
  return podTemplates(objects).flatMap(({ owner }) => {
    const spec = (owner as K8sKind<'Deployment'>).spec?.template?.spec;
    return [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].map((c) => ({
      where: `${owner.kind}/${owner.metadata.name} container ${c.name}`,
      image: c.image ?? '',
    }));
  });
}

/**
 * Images named anywhere but the kustomization's `images:`: each rendered container image must
 * be exactly what one entry makes of the base's name (newName, newTag or digest), and no file of
 * the overlay but kustomization.yaml may mention an image (a patch that sets `image:` would
 * bypass the one place a release writes).
 */
export function imagesNotFromOnePlace(dir: string, objects: K8sObject[]): string[] {
  const entries = kustomizeImages(dir);
  const expected = new Set(
    entries.map((e) => {
      const name = e.newName ?? e.name;
      return e.digest ? `${name}@${e.digest}` : `${name}:${e.newTag ?? 'latest'}`;
    }),
  );
  const problems = containerImages(objects)
    .filter(({ image }) => !expected.has(image))
    .map(({ where, image }) => `${where}: image ${image} is not from the kustomization's images:`);
  for (const file of readdirSync(dir)) {
    if (file === 'kustomization.yaml' || !/\.ya?ml$/.test(file)) continue;
    if (
      /^\s*(-\s*)?image:|\/image"?\s*$|path:\s*\S*\/image\b/m.test(
        readFileSync(join(dir, file), 'utf8'),
      )
    )
      problems.push(`${file}: sets an image outside images:`);
  }
  return problems;
}
