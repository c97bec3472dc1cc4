import { z } from 'zod';

// k8s.io/kube-scheduler/extender/v1: the Go types have no JSON tags, so keys are PascalCase.

const objectMeta = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  labels: z.record(z.string(), z.string()).nullish(),
  annotations: z.record(z.string(), z.string()).nullish(),
});

const node = z.looseObject({ metadata: objectMeta });

const pod = z.looseObject({
  metadata: objectMeta.extend({ uid: z.string().min(1) }),
  spec: z.looseObject({}).nullish(),
});

/** ExtenderArgs, less NodeNames: see checkNodeNames. */
export const extenderArgs = z.looseObject({
  Pod: pod,
  Nodes: z.looseObject({ items: z.array(node).nullable() }).nullish(),
});

/**
 * NodeNames is checked by hand: at 5,000 names any schema over the array costs as much as
 * the whole filter, and this is the hot path. Exactly one of Nodes and NodeNames is set.
 */
function checkNodeNames(names: unknown, hasNodes: boolean): void {
  if (names === null || names === undefined) {
    if (!hasNodes) throw new BadRequest('NodeNames', 'one of NodeNames or Nodes is required');
    return;
  }
  if (!Array.isArray(names)) throw new BadRequest('NodeNames', 'expected an array of node names or null');
  for (let i = 0; i < names.length; i++) {
    if (typeof names[i] !== 'string') throw new BadRequest(`NodeNames.${i}`, `expected string, received ${typeof names[i]}`);
  }
}

export type RawObject = Record<string, any>;

export interface ExtenderArgs {
  Pod: RawObject;
  /** Full Node objects, as sent; returned by reference when they pass. */
  Nodes?: { items: RawObject[] | null } | null;
  NodeNames?: string[] | null;
}

export interface HostPriority { Host: string; Score: number }

/** The KEP-3189 downscale pod-picker request. */
export const pickRequest = z.looseObject({
  number_of_pods_requested: z.number().int().positive(),
  candidate_pods: z.array(z.string().min(1)),
});

export type PickRequest = z.infer<typeof pickRequest>;

export function parsePickRequest(body: unknown): PickRequest {
  const r = pickRequest.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new BadRequest(issue.path.join('.') || '(body)', issue.message);
  }
  return r.data;
}

export class BadRequest extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
  }
}

/** Validates the shape; the raw object is kept so that Node objects return unchanged. */
export function parseExtenderArgs(body: unknown): ExtenderArgs {
  const r = extenderArgs.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new BadRequest(issue.path.join('.') || '(body)', issue.message);
  }
  const args = body as ExtenderArgs;
  checkNodeNames(args.NodeNames, !!args.Nodes);
  return args;
}

/** Mode is what the scheduler sent: names when nodeCacheCapable, full Nodes otherwise. */
export function namesMode(args: ExtenderArgs): boolean {
  return Array.isArray(args.NodeNames);
}
