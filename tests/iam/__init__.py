"""template.yaml's IAM proven by evaluation: its policies rendered (template_policies), evaluated by a
real policy evaluator (evaluator: @cloud-copilot/iam-simulate, tools/iam-simulate), against calls
that must be allowed and must be denied (test_policies_evaluated) and against every call a local
run makes (test_recorded_calls, through call_checks)."""
