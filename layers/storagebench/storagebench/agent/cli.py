"""Command line of the on-instance agent (stdlib argparse; Python 3.9+).

    python3 storagebench-agent.pyz run --plan plan.json --out /var/lib/storagebench/out
    python3 -m storagebench.agent devices
    python3 -m storagebench.agent sweep --run-id r-123   # undo what an aborted run left behind

Exit status: 0 all steps measured; 1 some steps failed (their siblings' results are kept);
2 the plan or the command line is invalid; 3 preparation failed, nothing measured;
7 another machine of a multi-machine plan failed, was lost or was not ready in time (the
manifest's error names it; steps measured before stay); 130 interrupted (teardown still ran).

A plan with ``topology`` (protocol.topology) is one machine of a multi-machine config: client 0 runs
the steps as above, any other machine serves its state and holds until client 0 says finish
(agent.node), locally with ``run`` as on AWS with ``task``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import List, Optional

from storagebench import __version__
from storagebench.agent import task
from storagebench.agent.devices import list_block_devices
from storagebench.agent.runner import EXIT_INVALID, Runner
from storagebench.agent.sweep import sweep
from storagebench.agent.sysinfo import system_facts
from storagebench.protocol.caveats import plan_caveats
from storagebench.protocol.plan import PlanError, TargetSpec, check_plan

DEFAULT_MOUNT_ROOT = "/mnt/storagebench"
DEFAULT_VOLUMES_DIR = "/var/tmp/storagebench-volumes"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="storagebench-agent", description="storagebench benchmark agent")
    parser.add_argument("--version", action="version", version=f"storagebench-agent {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="execute a plan and write raw output plus manifest.json")
    run.add_argument("--plan", required=True, help="plan JSON file ('-' for stdin)")
    run.add_argument("--out", required=True, help="output directory (created; must be empty)")
    run.add_argument("--mount-root", default=DEFAULT_MOUNT_ROOT, help="where targets are mounted")
    run.add_argument("--volumes-dir", default=DEFAULT_VOLUMES_DIR, help="backing files of emulated volumes")
    run.add_argument("--quiet", action="store_true", help="no progress on stderr (agent.log still written)")
    task.add_parser(commands)
    commands.add_parser("devices", help="list block devices with their EBS volume id / model (JSON)")
    commands.add_parser("sysinfo", help="the system facts a manifest records (JSON)")
    cleanup = commands.add_parser("sweep", help="remove mounts, arrays, loop devices and cgroups of a run")
    cleanup.add_argument("--run-id", required=True)
    cleanup.add_argument("--config-id", help="only this config of the run (its siblings keep running)")
    cleanup.add_argument("--mount-root", default=DEFAULT_MOUNT_ROOT)
    cleanup.add_argument("--volumes-dir", default=DEFAULT_VOLUMES_DIR)
    return parser


def _load_plan(source: str) -> object:
    try:
        if source == "-":
            return json.load(sys.stdin)
        with open(source, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as exc:
        raise PlanError([f"--plan {source}: {exc.strerror}"]) from None
    except json.JSONDecodeError as exc:
        raise PlanError(
            [f"--plan {source}: not JSON (line {exc.lineno} column {exc.colno}: {exc.msg})"]
        ) from None


def warn_about_targets(targets: List[TargetSpec]) -> None:
    """Before anything runs, say on stderr what emulated volumes and directories cannot measure
    (the report's first lines say the same); printed even with --quiet: it is not progress."""
    for caveat in plan_caveats(targets):
        print(f"storagebench-agent: warning: {caveat}", file=sys.stderr)


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "task":
        return task.main(args)
    if args.command == "devices":
        print(json.dumps([d.info() for d in list_block_devices()], indent=2))
        return 0
    if args.command == "sysinfo":
        print(json.dumps(system_facts(), indent=2))
        return 0
    if args.command == "sweep":
        report = sweep(args.run_id, args.mount_root, args.volumes_dir, args.config_id)
        print(json.dumps(report, indent=2))
        return 0 if not report["leftovers"] else 1
    try:
        plan = check_plan(_load_plan(args.plan))
    except PlanError as exc:
        print(f"storagebench-agent: {exc}", file=sys.stderr)
        return EXIT_INVALID
    if os.path.isdir(args.out) and os.listdir(args.out):
        print(
            f"storagebench-agent: --out {args.out} is not empty; results are never overwritten",
            file=sys.stderr,
        )
        return EXIT_INVALID
    from storagebench.agent.log import Progress

    warn_about_targets(plan.get("targets") or [])
    os.makedirs(args.out, exist_ok=True)
    progress = Progress(args.out, quiet=args.quiet)
    return Runner(plan, args.out, args.mount_root, args.volumes_dir, progress).execute()


def run_main() -> None:
    """Entry point of the zipapp."""
    sys.exit(main())
