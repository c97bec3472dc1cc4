import { z } from 'zod';
import { badRequestOf, BadRequest } from '../../common/errors.js';
import { parseJson } from '../../http/requestBody.js';
import { sectionNames, splitNodeNames, type AnsweredNames } from './namesSection.js';
import { deeperThan, LIMITS, validateNode, validateNodeNames, validatePod, type RawObject } from './validation.js';

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
const extenderArgs = z.looseObject({
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
  validateNodeNames(names);
}

/** More candidates than the cluster has nodes (with room for nodes the cache has not seen yet). */
function checkCount(n: number, field: string, maxNodes: number): void {
  if (n > maxNodes) throw new BadRequest(field, `${n} nodes sent, more than the ${maxNodes} a request may carry for this cluster`);
}

/** NodeNames counted apart from the body: the first check parseExtenderArgs gives them. */
function checkNodeNamesCount(n: number, maxNodes = Infinity): void {
  checkCount(n, 'NodeNames', maxNodes);
}

/** NodeNames read apart from the body (counted already): the checks parseExtenderArgs gives each name. */
export function checkNodeNamesList(names: readonly unknown[]): void {
  validateNodeNames(names as unknown[]);
}

/** The most candidates one request may carry: the cluster's nodes, twice over, or 10,000 more. */
export function maxCandidates(cachedNodes: number): number {
  return cachedNodes + Math.max(cachedNodes, 10_000);
}

export interface ExtenderArgs {
  Pod: RawObject;
  /** Full Node objects, as sent; returned by reference when they pass. */
  Nodes?: { items: RawObject[] | null } | null;
  NodeNames?: readonly string[] | null;
}

/**
 * Validates the shape, then Kubernetes' limits on what zonekeeper reads and keeps. The lists
 * are counted before anything walks them. The raw object is kept so that Node objects
 * return unchanged.
 */
export function parseExtenderArgs(body: unknown, maxNodes = Infinity): ExtenderArgs {
  const raw = body as RawObject | null;
  if (Array.isArray(raw?.NodeNames)) checkCount(raw.NodeNames.length, 'NodeNames', maxNodes);
  if (Array.isArray(raw?.Nodes?.items)) checkCount(raw.Nodes.items.length, 'Nodes.items', maxNodes);
  const r = extenderArgs.safeParse(body);
  if (!r.success) throw badRequestOf(r.error);
  const args = body as ExtenderArgs;
  checkNodeNames(args.NodeNames, !!args.Nodes);
  validatePod(args.Pod);
  if (deeperThan(args.Pod, LIMITS.depth)) throw new BadRequest('Pod', `nested deeper than ${LIMITS.depth} levels`);
  const items = args.Nodes?.items ?? [];
  for (let i = 0; i < items.length; i++) {
    validateNode(items[i]!, i);
    if (deeperThan(items[i], LIMITS.depth)) throw new BadRequest(`Nodes.items.${i}`, `nested deeper than ${LIMITS.depth} levels`);
  }
  return args;
}

/** Mode is what the scheduler sent: names when nodeCacheCapable, full Nodes otherwise. */
export function namesMode(args: ExtenderArgs): boolean {
  return Array.isArray(args.NodeNames);
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * ExtenderArgs from a body's text; a BadRequest names the field that is wrong. NodeNames
 * taken apart from the rest (namesSection.ts) get the same checks; on any doubt or error the
 * whole body is parsed again, so errors read as they always did.
 */
export function parseArgs(text: string, maxNodes?: number, answered: Iterable<AnsweredNames> = []): ExtenderArgs {
  const split = splitNodeNames(text);
  const found = split && sectionNames(split.section, answered, maxNodes);
  const rest = found && parsedOrUndefined(split.rest);
  if (found && rest !== undefined) {
    // The body parses whole (the section is plain), so too many names is the first error it
    // gives: given here, the names past the bound are never taken apart.
    checkNodeNamesCount(found.count, maxNodes);
    try {
      const args = parseExtenderArgs(rest, maxNodes);
      if (args.NodeNames?.length === 0) {
        if (!found.checked) checkNodeNamesList(found.names);
        args.NodeNames = found.names;
        return args;
      }
    } catch {
      // the whole body, for the error it names
    }
  }
  return parseExtenderArgs(parseJson(text, 'ExtenderArgs'), maxNodes);
}
