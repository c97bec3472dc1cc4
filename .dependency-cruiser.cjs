// The layering of docs/design.md ("Module map" and "Dependency rules"): data flows
// cluster/ → placement/ → decision/ (the one decision service) → the transports side by side
// (extender/, admission/, gate/, policy/, eviction/) → server/ (listeners); http/ is the
// routes' shared plumbing, actuator/ holds the writes, controllers/ the background writers,
// house.ts builds and connects them all, cli/main on top.
const TRANSPORTS = '^src/(extender|admission|gate|policy|eviction|karmada)/';
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-cycle', severity: 'error', comment: 'An import cycle: modules that need each other belong in one module, or their shared part in a third.', from: {}, to: { circular: true } },
    { name: 'common-is-the-floor', severity: 'error', comment: 'common/ imports nothing else of zonekeeper.', from: { path: '^src/common/' }, to: { path: '^src/', pathNot: '^src/common/' } },
    { name: 'cluster-below-everything', severity: 'error', comment: 'cluster/ (watch cache, store, kinds) reads nothing above it.', from: { path: '^src/cluster/' }, to: { path: '^src/', pathNot: '^src/(cluster|common)/' } },
    { name: 'placement-is-pure', severity: 'error', comment: 'placement/ is pure: cluster/ and common/ below it, nothing above.', from: { path: '^src/placement/' }, to: { path: '^src/', pathNot: '^src/(cluster|common|placement)/' } },
    { name: 'placement-does-no-io', severity: 'error', comment: 'placement/ does no I/O and keeps no process-wide resources.', from: { path: '^src/placement/' }, to: { dependencyTypes: ['core', 'npm'], pathNot: 'node_modules/zod/' } },
    { name: 'metrics-above-placement', severity: 'error', comment: 'metrics/ (the registry and gauges) reads cluster/ and placement/ types only.', from: { path: '^src/metrics/' }, to: { path: '^src/', pathNot: '^src/(cluster|common|placement|metrics)/' } },
    { name: 'actuator-below-extender', severity: 'error', comment: 'actuator/ (writes to the API) is used by the extender and main, never the other way.', from: { path: '^src/actuator/' }, to: { path: '^src/(extender|server|main|cli)' } },
    { name: 'one-decision-core', severity: 'error', comment: 'decision/ (the service, its input builder, reservations, decision records) is below every transport.', from: { path: '^src/decision/' }, to: { path: '^src/(extender|admission|gate|policy|eviction|karmada|http|server|controllers|house|main|cli)' } },
    { name: 'transports-ask-the-service', severity: 'error', comment: 'A transport decodes, makes one call to the decision service, and encodes: it never reaches the core, the ledger or what decisions remember (docs/design.md#transports).', from: { path: TRANSPORTS }, to: { path: '^src/decision/(core|placementState|reservationLedger|recording|scheduling|specVerbs|instanceIdStep|views)\\.ts$', dependencyTypesNot: ['type-only'] } },
    { name: 'transports-side-by-side', severity: 'error', comment: 'No transport imports another: each calls the decision service.', from: { path: '^src/(extender|admission|gate|policy|eviction|karmada)/' }, to: { path: TRANSPORTS, pathNot: '^src/$1/' } },
    { name: 'one-decision-service', severity: 'error', comment: 'Only the service builds the decision core: a second core would be a second reservation ledger. Transports take the service built once in house.ts.', from: { path: '^src/', pathNot: '^src/decision/service\\.ts$' }, to: { path: '^src/decision/core\\.ts$', dependencyTypesNot: ['type-only'] } },
    { name: 'transports-below-the-house', severity: 'error', comment: 'Transports reach neither the listeners nor the wiring above them.', from: { path: TRANSPORTS }, to: { path: '^src/(server/|house|main|cli)' } },
    { name: 'http-is-plumbing', severity: 'error', comment: 'http/ (body, errors, a verb\'s route) is shared by the transports\' routes and server/: it knows no transport.', from: { path: '^src/http/' }, to: { path: '^src/', pathNot: '^src/(common|metrics|http)/' } },
    { name: 'controllers-beside-the-writes', severity: 'error', comment: 'controllers/ (background writers on the work queue) use actuator/, placement/ and the decision service; never a transport or what is above them.', from: { path: '^src/controllers/' }, to: { path: '^src/(extender|admission|gate|policy|eviction|karmada|server|house|main|cli)' } },
    { name: 'only-the-house-wires', severity: 'error', comment: 'house.ts builds and connects; only main.ts and the federation audit (and the tests) reach it.', from: { path: '^src/', pathNot: '^src/(house|main|auditFederation)\\.ts$' }, to: { path: '^src/house\\.ts$' } },
    { name: 'extender-below-server', severity: 'error', comment: 'extender/ speaks the protocol; the listeners above it are server/.', from: { path: '^src/extender/' }, to: { path: '^src/(server|main|cli)' } },
    { name: 'only-main-reaches-server', severity: 'error', comment: 'server/ is reached only from main.ts, cli.ts and house.ts.', from: { path: '^src/', pathNot: '^src/(server/|main\\.ts|cli\\.ts|house\\.ts)' }, to: { path: '^src/server/' } },
    { name: 'nothing-reaches-main', severity: 'error', comment: 'main.ts and cli.ts are the top.', from: { path: '^src/', pathNot: '^src/(main|cli)\\.ts' }, to: { path: '^src/(main|cli)\\.ts' } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // A policy's tests sit beside it and may use test/support; the rules are for the program.
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
};
