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

/** ExtenderArgs. Exactly one of Nodes (nodeCacheCapable: false) and NodeNames is set. */
export const extenderArgs = z.looseObject({
  Pod: pod,
  Nodes: z.looseObject({ items: z.array(node).nullable() }).nullish(),
  NodeNames: z.array(z.string()).nullish(),
}).superRefine((a, ctx) => {
  if (!a.NodeNames && !a.Nodes) ctx.addIssue({ code: 'custom', path: ['NodeNames'], message: 'one of NodeNames or Nodes is required' });
});

export type RawObject = Record<string, any>;

export interface ExtenderArgs {
  Pod: RawObject;
  /** Full Node objects, as sent; returned by reference when they pass. */
  Nodes?: { items: RawObject[] | null } | null;
  NodeNames?: string[] | null;
}

export interface ExtenderFilterResult {
  Nodes: { items: RawObject[] } | null;
  NodeNames: string[] | null;
  FailedNodes: Record<string, string>;
  FailedAndUnresolvableNodes: Record<string, string>;
  Error: string;
}

export interface HostPriority { Host: string; Score: number }

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
  return body as ExtenderArgs;
}

/** Mode is what the scheduler sent: names when nodeCacheCapable, full Nodes otherwise. */
export function namesMode(args: ExtenderArgs): boolean {
  return Array.isArray(args.NodeNames);
}
