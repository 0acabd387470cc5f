"""``storagebench agent``: run the benchmark agent on this machine and show its records.

Three ways in, all through the request model so the rules are the service's:
  --workload PROFILE (--emulate TYPE:SIZE[:IOPS[:MIBPS]] | --dir PATH)   one ad-hoc target
  --suite FILE [--config ID]                                         a config of a request
  --plan FILE                                                        a ready agent plan
"""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from storagebench.cli.console import err, fail, out, print_json
from storagebench.cli.options import parse_emulate, parse_params
from storagebench.core.clock import stamp
from storagebench.protocol.caveats import plan_caveats
from storagebench.protocol.plan import Plan

ADHOC_INSTANCE = "c5.4xlarge"  # no 30-minute EBS burst: the instance does not cap ad-hoc targets


def _adhoc_request(
    workloads: list[str],
    scale: float,
    params: dict[str, Any],
    emulate: str | None,
    directory: Path | None,
    filesystem: str,
    repetitions: int,
    prewarm: str,
) -> dict[str, Any]:
    if emulate:
        volume = parse_emulate(emulate)
        target: dict[str, Any] = {"kind": "ebs", "filesystem": filesystem, **volume}
        config_id = f"{volume['type']}-{volume['size_gib']}"
    else:
        assert directory is not None
        target = {"kind": "local", "path": str(directory.resolve())}
        config_id = "directory"
    return {
        "name": "adhoc",
        "configs": [{"id": config_id, "instance_type": ADHOC_INSTANCE, "targets": [target]}],
        "workloads": [{"profile": name, "scale": scale, "params": params} for name in workloads],
        "repetitions": repetitions,
        "prewarm": {"method": prewarm},
    }


def _default_out() -> Path:
    return Path(".storagebench") / "agent" / stamp()


def agent(
    workload: Annotated[
        list[str] | None, typer.Option("--workload", "-w", help="profile (repeatable)")
    ] = None,
    emulate: Annotated[
        str | None, typer.Option(help="emulated EBS volume TYPE:SIZE[:IOPS[:MIBPS]], e.g. gp3:100")
    ] = None,
    directory: Annotated[
        Path | None, typer.Option("--dir", help="benchmark a directory in place (unthrottled)")
    ] = None,
    scale: Annotated[float, typer.Option(help="work multiplier (sizes, counts, runtimes)")] = 0.01,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="override NAME=VALUE (JSON value)")
    ] = None,
    filesystem: Annotated[str, typer.Option(help="for --emulate: xfs, ext4, btrfs or raw")] = "xfs",
    repetitions: Annotated[int, typer.Option(help="runs of each workload")] = 1,
    prewarm: Annotated[str, typer.Option(help="none, dd or fio")] = "dd",
    suite: Annotated[
        Path | None, typer.Option("--suite", "-s", help="request file: run one of its configs here")
    ] = None,
    config: Annotated[str | None, typer.Option(help="config id in --suite (default: the first)")] = None,
    plan_file: Annotated[Path | None, typer.Option("--plan", help="an agent plan JSON to run as is")] = None,
    output: Annotated[
        Path | None, typer.Option("--out", help="output directory (default .storagebench/agent/<time>)")
    ] = None,
    capacity_gib: Annotated[float, typer.Option(help="size of each emulated volume's backing file")] = 1.0,
    knee_seconds: Annotated[
        float, typer.Option(help="gp2/st1/sc1: a full burst bucket lasts this long")
    ] = 60.0,
    emulator: Annotated[
        str,
        typer.Option(
            help="for emulated volumes: auto (the EBS twin where it works, else the throttle), twin, throttle"
        ),
    ] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="print the records as JSON")] = False,
) -> None:
    """Run workloads on this machine with the benchmark agent and print the normalized records."""
    from storagebench.agent.runner import EXIT_OK, Runner
    from storagebench.planning import LocalOptions, LocalTargetError, build_plan, local_targets
    from storagebench.protocol.plan import EMULATORS, PlanError, check_plan
    from storagebench.request import RequestError, load_request, parse_request
    from storagebench_local.native_twin import with_native_twin

    if emulator not in EMULATORS:
        raise fail(f"--emulator {emulator!r}: one of {', '.join(EMULATORS)} expected")
    sources = [bool(workload), suite is not None, plan_file is not None]
    if sum(sources) != 1:
        raise fail("give exactly one of --workload, --suite or --plan")
    if workload and (emulate is None) == (directory is None):
        raise fail("with --workload give exactly one of --emulate TYPE:SIZE or --dir PATH")
    if (emulate or suite) and os.geteuid() != 0:
        raise fail(
            "emulated volumes need root (loop devices and cgroup throttling); "
            "run as root, or use --dir PATH to benchmark a directory unthrottled"
        )
    run_id = "local-" + datetime.datetime.now(datetime.UTC).strftime("%Y%m%d%H%M%S")
    try:
        if plan_file is not None:
            plan = check_plan(json.loads(plan_file.read_text(encoding="utf-8")))
        else:
            if workload:
                try:
                    params = parse_params(param or [])
                    document = _adhoc_request(
                        workload, scale, params, emulate, directory, filesystem, repetitions, prewarm
                    )
                except ValueError as exc:
                    raise fail(str(exc)) from None
                request = parse_request(document)
            else:
                assert suite is not None
                request = load_request(suite)
            config_id = config or request.configs[0].id
            options = with_native_twin(
                LocalOptions(
                    capacity_bytes=int(capacity_gib * (1 << 30)), knee_seconds=knee_seconds, emulator=emulator
                )
            )
            plan = build_plan(request, config_id, run_id, local_targets(request.config(config_id), options))
    except RequestError as exc:
        raise fail(str(exc)) from None
    except KeyError as exc:  # an unknown config id: its message is the argument, not repr()
        raise fail(str(exc.args[0])) from None
    except (PlanError, LocalTargetError, OSError, json.JSONDecodeError) as exc:
        raise fail(str(exc)) from None
    target_dir = output or _default_out()
    if target_dir.exists() and any(target_dir.iterdir()):
        raise fail(f"--out {target_dir} is not empty; results are never overwritten")
    warn_about_targets(plan)
    target_dir.mkdir(parents=True, exist_ok=True)
    code = Runner(plan, str(target_dir), "/mnt/storagebench", "/var/tmp/storagebench-volumes").execute()
    show_results(target_dir, as_json)
    if code != EXIT_OK:
        raise typer.Exit(1)


def warn_about_targets(plan: Plan) -> None:
    """On stderr, before anything runs: what emulated volumes and directories cannot measure, in the
    words the report opens with (``protocol.caveats``), so --json output on stdout stays clean."""
    for caveat in plan_caveats(plan.get("targets") or []):
        err.print(Text.assemble(("warning: ", "bold yellow"), caveat), highlight=False, soft_wrap=True)


def show_results(output_dir: Path, as_json: bool) -> None:
    from storagebench.analysis.stats import aggregate
    from storagebench.cli import render
    from storagebench.results.collect import collect

    collection = collect(output_dir)
    if as_json:
        print_json(
            {
                "output": str(output_dir),
                "records": [r.model_dump(mode="json") for r in collection.records],
                "problems": collection.problems,
                "warnings": collection.warnings,
            }
        )
        return
    emulated = render.caveats(err, collection.records)  # said before the run too: stderr, as then
    render.aggregates(out, aggregate(collection.records), emulated=emulated, records=collection.records)
    for problem in collection.problems:
        out.print(Text.assemble(("problem: ", "yellow"), problem), highlight=False)
    for warning in collection.warnings:
        out.print(Text.assemble(("warning: ", "yellow"), warning), highlight=False)
    out.print(Text(f"raw output and manifest: {output_dir}"), highlight=False)


def register(app: typer.Typer) -> None:
    app.command()(agent)
