// Evaluates a batch of IAM requests with @cloud-copilot/iam-simulate (tests/iam/evaluator.py drives it).
//
// stdin:  {"requests": [{"id", "principal": "arn:aws:sts::<account>:assumed-role/<role>/<session>" or a
//            service principal, "action": "ec2:RunInstances", "resource": "arn:..." or "*",
//            "accountId", "context": {"aws:RequestTag/k": "v", ...},
//            "identityPolicies": [{"name", "policy"}], "resourcePolicy": {...} | null}]}
// stdout: {"results": [{"id", "decision": "Allowed" | "ImplicitlyDenied" | "ExplicitlyDenied" | null,
//            "error": null | "...", "unvalidated": null | "why the input was not validated",
//            "ignoredContextKeys": [...], "grants": [...], "denials": [...],
//            "statements": [{"policyType", "policy", "sid", "index", "effect", "actionMatch",
//                            "resourceMatch", "principalMatch", "conditionMatch",
//                            "conditions": [{"operator", "key", "matches", "missing"}]}]}]}
//
// One process answers the whole batch, in Strict mode: a context key the action does not define is
// reported in ignoredContextKeys (the caller decides whether that is an error), and a policy or
// request the simulator cannot validate is an error, never a decision.
import { getDenialReasons, getGrantReasons, runSimulation, runUnsafeSimulation } from '@cloud-copilot/iam-simulate'

async function readStdin() {
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  return Buffer.concat(chunks).toString('utf8')
}

// Every statement of the identity and resource policies, as the evaluator matched it: which one
// granted or denied, and which matched the action and resource but not their condition.
function analysesOf(analysis) {
  const statements = []
  const add = (policyType, group) => {
    for (const key of ['allowStatements', 'denyStatements', 'unmatchedStatements']) {
      for (const s of group?.[key] ?? []) {
        statements.push({
          policyType,
          policy: s.policyId ?? null,
          sid: s.statement.sid() ?? null,
          index: s.statement.index(),
          effect: s.statement.effect(),
          actionMatch: s.actionMatch,
          resourceMatch: s.resourceMatch,
          principalMatch: s.principalMatch ?? null,
          conditionMatch: s.conditionMatch,
          conditions: (s.explain?.conditions ?? []).map((c) => ({
            operator: c.operator,
            key: c.conditionKeyValue,
            matches: c.matches,
            missing: c.failedBecauseMissing ?? false
          }))
        })
      }
    }
  }
  if (analysis) {
    add('identity', analysis.identityAnalysis)
    add('resource', analysis.resourceAnalysis)
  }
  return statements
}

function statementsOf(analysis) {
  if (!analysis) return { grants: [], denials: [], statements: [] }
  const describe = (reason) => ({
    policyType: reason.policyType,
    policy: reason.policyIdentifier ?? reason.identifier ?? null,
    sid: reason.statementId ?? null,
    index: reason.statementIndex ?? null,
    kind: reason.denialType ?? 'Grant'
  })
  return {
    grants: getGrantReasons(analysis).map(describe),
    denials: getDenialReasons(analysis).map(describe),
    statements: analysesOf(analysis)
  }
}

// AWS matches a request's resource ARN literally: RunInstances authorises "instance/*", the instance
// it is about to create, against each statement's Resource patterns. iam-simulate reads a "*" in a
// request ARN as "some resource of this pattern" instead (and keeps no analysis of a denial), so the
// "*" of a request ARN goes in as U+2217, which only a policy wildcard matches, as only a wildcard
// matches the literal "*". A wildcard-only action's "*" stays "*".
const LITERAL_STAR = '\u2217'

async function evaluate(request) {
  const resource = request.resource === '*' ? '*' : request.resource.replaceAll('*', LITERAL_STAR)
  const simulation = {
    request: {
      principal: request.principal,
      action: request.action,
      resource: { resource, accountId: request.accountId },
      contextVariables: request.context ?? {}
    },
    identityPolicies: request.identityPolicies ?? [],
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    ...(request.resourcePolicy ? { resourcePolicy: request.resourcePolicy } : {})
  }
  const base = {
    id: request.id, decision: null, error: null, unvalidated: null, ignoredContextKeys: [], grants: [], denials: [],
    statements: []
  }
  let response
  try {
    response = await runSimulation(simulation, { simulationMode: 'Strict' })
  } catch (error) {
    return { ...base, error: `simulator raised: ${error?.stack ?? error}` }
  }
  if (response.resultType === 'error') {
    // AWS's own resources have ARNs without an account (public SSM parameters:
    // arn:aws:ssm:<region>::parameter/aws/service/...), which iam-data's ARN patterns do not match.
    // Those alone are evaluated without the input validation (the decision, no statement analysis).
    if (response.errors.message === 'no.resource.types' && request.resource.split(':')[4] === '') {
      try {
        const decision = runUnsafeSimulation(simulation, { simulationMode: 'Strict' })
        return { ...base, decision, unvalidated: 'an ARN without an account: evaluated without validation' }
      } catch (error) {
        return { ...base, error: `simulator raised: ${error?.stack ?? error}` }
      }
    }
    return { ...base, error: JSON.stringify(response.errors) }
  }
  if (response.resultType === 'single') {
    return {
      ...base,
      decision: response.overallResult,
      ignoredContextKeys: response.result.ignoredContextKeys ?? [],
      ...statementsOf(response.result.analysis)
    }
  }
  // a wildcard resource: the overall result over every pattern the policies name
  const first = response.results[0]
  return {
    ...base,
    decision: response.overallResult,
    ignoredContextKeys: [...new Set(response.results.flatMap((r) => r.ignoredContextKeys ?? []))],
    ...statementsOf(first?.analysis)
  }
}

const input = JSON.parse(await readStdin())
if (!input || !Array.isArray(input.requests)) {
  process.stderr.write('simulate.mjs: stdin must be {"requests": [...]}\n')
  process.exit(2)
}
const results = []
for (const request of input.requests) results.push(await evaluate(request))
process.stdout.write(JSON.stringify({ results }) + '\n')
