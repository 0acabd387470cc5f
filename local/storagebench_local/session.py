"""A local stack: the real workflow on this machine, with no AWS account and no Docker.

* the state machine is the ASL file of ``template.yaml``, run by moto's Step Functions
  interpreter (substitutions resolved from the template, so nothing can drift);
* its Lambda tasks are the handlers of ``functions/``, served in-process by a local Invoke
  endpoint (boto3 reaches it through AWS_ENDPOINT_URL_LAMBDA);
* EC2, EFS, FSx and SSM parameters are moto's, driven by the same AWS adapters as on AWS;
* the agent reaches its instance the way it does on AWS: ``SsmAgents`` sends the template's
  ``AgentDocument`` through SSM, and a local SSM agent runs that document's shell on a local
  instance (its own mount namespace and metadata service) whose AWS calls reach the same
  backends over HTTP (moto's server mode on 127.0.0.1); EBS targets stand on emulated volumes;
* results go to DynamoDB Local (the real engine, persisted under ``.storagebench/dynamodb``)
  and artifacts to the local bucket, mirrored to ``.storagebench/artifacts``.

Without Java, DynamoDB Local cannot run: results then live in moto's in-memory DynamoDB for the
duration of the run only (printed with the run, and in ``--json``), and the session says so.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storagebench.core.guardrails import Guardrails
from storagebench.planning.local import LocalOptions
from storagebench.request.model import MAX_CONFIGS
from storagebench.wiring import services as wiring
from storagebench.workflow.ports import Services
from storagebench.workflow.run_ids import new_run_id
from storagebench_local.adapters.artifacts import LocalArtifacts, MirroredArtifacts
from storagebench_local.adapters.faults import FaultPlan
from storagebench_local.adapters.notifications import FileNotifier
from storagebench_local.aws_calls import ENV_VARIABLE as RECORD_AWS_CALLS
from storagebench_local.aws_calls import AwsCallRecorder
from storagebench_local.native_twin import with_native_twin

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / ".tools"
IMAGE_CACHE = REPO / ".cache" / "images"
REGION = "us-east-1"
ACCOUNT = "123456789012"
STACK = "storagebench-local"
TABLE = "storagebench-results"
ARTIFACTS_BUCKET = "storagebench-local-artifacts"
LOCAL_ENV = {
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_DISABLED": "true",
    "POWERTOOLS_LOG_LEVEL": "ERROR",
    "POWERTOOLS_SERVICE_NAME": "storagebench",
    "POWERTOOLS_METRICS_NAMESPACE": "storagebench",
}


@dataclass
class Execution:
    run_id: str
    arn: str
    status: str
    output: dict[str, Any] | None
    error: str | None
    cause: str | None
    wall_s: float
    history: list[dict[str, Any]] = field(default_factory=list)
    # One history per child execution of a Distributed Map (each config's, past 40 configs)
    child_histories: list[list[dict[str, Any]]] = field(default_factory=list)


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _history(sfn: Any, arn: str) -> list[dict[str, Any]]:
    """Every event of an execution (a child execution of a Distributed Map too), page by page."""
    events: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        page = sfn.get_execution_history(
            executionArn=arn, maxResults=1000, **({"nextToken": token} if token else {})
        )
        events.extend(page["events"])
        token = page.get("nextToken")
        if not token:
            return events


def _children(sfn: Any, map_run_arn: str) -> list[dict[str, Any]]:
    """The child executions a Distributed Map run started (one per config)."""
    children: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        page = sfn.list_executions(mapRunArn=map_run_arn, **({"nextToken": token} if token else {}))
        children.extend(page["executions"])
        token = page.get("nextToken")
        if not token:
            return children


def fast_retries(node: Any) -> Any:
    """The definition with 1 s, non-growing retry intervals (tests only: moto really sleeps).

    Every Retry keeps its error names and attempt counts, so the paths taken are the same.
    """
    if isinstance(node, dict):
        if "ErrorEquals" in node and "MaxAttempts" in node:
            node = {k: v for k, v in node.items() if k not in ("MaxDelaySeconds", "JitterStrategy")}
            node["IntervalSeconds"] = 1
            node["BackoffRate"] = 1.0
        return {k: fast_retries(v) for k, v in node.items()}
    if isinstance(node, list):
        return [fast_retries(v) for v in node]
    return node


LOCAL_NO_GATEWAY = (
    "local mode cannot stand in for a File Gateway here ({reason}); run file_gateway configs on a "
    "deployed stack (or the client side alone against a directory, kind local)"
)
NFS_CLIENT = TOOLS / "bin" / "storagebench-mount-nfs"
GANESHA_PRELOAD = TOOLS / "lib" / "storagebench-ganesha-no-portmap.so"
SHARE_ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/storagebench-local-share"


def gateway_unavailable() -> str | None:
    """Why this machine cannot stand in for a File Gateway (an NFS server and the instances' NFS
    client), or None."""
    from storagebench_local.nfs_server import unavailable

    if not NFS_CLIENT.is_file():
        return f"{NFS_CLIENT} is missing (make setup builds it: make nfs-client)"
    return unavailable(GANESHA_PRELOAD)


class LocalSession:
    """Everything a local run needs, started on enter and stopped on exit (on every path)."""

    def __init__(
        self,
        root: Path = Path(".storagebench"),
        options: LocalOptions | None = None,
        faults: FaultPlan | None = None,
        guardrails: Guardrails | None = None,
        use_dynamodb_local: bool = True,
        fast_retries: bool = False,
        template: Path = REPO / "template.yaml",
        image_root: Path | None = None,
        aws_calls: AwsCallRecorder | None = None,
    ) -> None:
        self.image_root = image_root  # instances chroot into a copy of it (None: this machine's root)
        self.published_images: dict[str, str] = {}  # "<image>/<arch>" -> the AMI local mode published
        self.root = root.resolve()
        self.options = with_native_twin(options or LocalOptions())
        self.faults = faults or FaultPlan()
        # As many configs as a request may hold (past 40, the Distributed Map), 8 at once on this machine
        limits = guardrails or Guardrails(max_configs_per_run=MAX_CONFIGS, max_concurrency=8)
        # A File Gateway stands on a local NFS server (adapters.local_gateway); without one, local
        # mode refuses file_gateway configs at Plan, saying why.
        # (Guardrails' own file_gateway refusal names a stack's settings, which local mode replaces.)
        self.gateway_refusal = gateway_unavailable()
        kinds = {k: v for k, v in limits.unprovisionable_kinds.items() if k != "file_gateway"}
        if self.gateway_refusal is not None:
            kinds["file_gateway"] = LOCAL_NO_GATEWAY.format(reason=self.gateway_refusal)
        self.guardrails = limits.model_copy(update={"unprovisionable_kinds": kinds})
        self.gateway_host: Any = None
        self.use_dynamodb_local = use_dynamodb_local
        self.fast_retries = fast_retries
        self.template_path = template
        self.mount_root = Path("/mnt/storagebench")
        self.volumes_dir = Path("/var/tmp/storagebench-volumes")
        self.notices: list[str] = []
        self._stack = ExitStack()
        self._prefix_ec2: Any = None  # instance_prefix's client, made on first use
        self._prefixes: dict[tuple[str, str, str | None], tuple[float, str]] = {}
        self.services: Services | None = None
        self.state_machine_arn = ""
        self.dynamodb_endpoint: str | None = None
        self.aws_endpoint = ""
        self.ssm_agent: Any = None
        # every AWS call of the run by principal, for tests/iam (opt-in: argument or environment)
        recording = os.environ.get(RECORD_AWS_CALLS)
        self.aws_calls = aws_calls or (AwsCallRecorder(REGION, Path(recording)) if recording else None)

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> LocalSession:
        try:
            self._start()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        wiring.configure(None)
        self._stack.close()

    def _start(self) -> None:
        import boto3
        from moto import mock_aws

        from storagebench_local import moto_fixes

        moto_fixes.apply()

        from storagebench.adapters.aws.dynamodb import DynamoResultsStore
        from storagebench.adapters.aws.filesystems import AwsFileSystems
        from storagebench.adapters.aws.s3 import S3Artifacts
        from storagebench.adapters.aws.settings import AwsSettings
        from storagebench.adapters.aws.spot_prices import Ec2SpotPriceHistory
        from storagebench_local.adapters.moto_ec2 import MotoEc2Compute, MotoEc2Network
        from storagebench_local.template import Template

        self._stack.enter_context(_environment(LOCAL_ENV))
        if self.aws_calls is not None:  # before the first client: it hooks the clients created from now on
            self._stack.enter_context(self.aws_calls.recording())
        template = Template(self.template_path)
        store_client = self._results_client(template)  # before moto: DynamoDB Local is not AWS
        self._stack.enter_context(mock_aws(config={"stepfunctions": {"execute_state_machine": True}}))
        if store_client is None:
            store_client = boto3.client("dynamodb", region_name=REGION)
            self._ensure_table(store_client, template)
        network = self._network()
        settings = AwsSettings(
            results_table=TABLE,
            artifacts_bucket=ARTIFACTS_BUCKET,
            stack_name=STACK,
            subnet_id=network["subnet"],
            security_group_id=network["group"],
            instance_profile_arn=network["profile"],
            instance_role_id=network["role_id"],
            agent_document="storagebench-agent",
            region=REGION,
        )
        ec2 = boto3.client("ec2", region_name=REGION)
        ssm = boto3.client("ssm", region_name=REGION)
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=settings.artifacts_bucket)
        bucket = S3Artifacts(s3, settings.artifacts_bucket)
        disk = LocalArtifacts(self.root / "artifacts")
        artifacts = MirroredArtifacts(bucket, disk)
        agents = self._document_agents(ssm, s3, ec2, settings, bucket, template)
        self.services = Services(
            compute=MotoEc2Compute(
                boto3.client("ec2", region_name=REGION), boto3.client("ssm", region_name=REGION), settings
            ),
            filesystems=AwsFileSystems(
                boto3.client("efs", region_name=REGION), boto3.client("fsx", region_name=REGION), settings
            ),
            agents=agents,
            artifacts=artifacts,
            store=DynamoResultsStore(store_client, TABLE),
            guardrails=self.guardrails,
            stack=STACK,
            region=REGION,
            notifier=FileNotifier(self.root / "notifications.jsonl"),  # what SNS would carry
            # moto's DescribeSpotPriceHistory: one synthetic price per zone, read like EC2's
            spot_prices=lambda region: Ec2SpotPriceHistory(boto3.client("ec2", region_name=region)),
            network=MotoEc2Network(ec2, settings),  # moto's EC2 with placement groups added
            network_ceilings=False,  # the local instances' network is loopback, not their type's
            gateways=self._gateways(ec2, network["subnet"]),
        )
        wiring.configure(self.services)
        self._serve_functions(template)
        self.state_machine_arn = self._create_state_machine(template)

    def _gateways(self, ec2: Any, subnet: str) -> Any:
        """File Gateways on local NFS servers (None when this machine cannot run them)."""
        from storagebench.gateway.lifecycle import GatewayPorts
        from storagebench.workflow.ports import GatewayServices
        from storagebench_local.adapters.local_gateway import (
            LocalActivationKeys,
            LocalAppliances,
            LocalGatewayHost,
            LocalGateways,
            LocalShareObjects,
        )

        if self.gateway_refusal is not None:
            return None
        host = LocalGatewayHost(ec2, subnet, self.root / "gateways", GANESHA_PRELOAD, REGION)
        self._stack.callback(host.close)
        self.gateway_host = host
        ports = GatewayPorts(
            appliances=LocalAppliances(host),
            keys=LocalActivationKeys(host),
            gateways=LocalGateways(host),
            objects=LocalShareObjects(host),
        )
        return GatewayServices(ports=ports, share_bucket=ARTIFACTS_BUCKET, role_arn=SHARE_ROLE_ARN)

    def _document_agents(self, ssm: Any, s3: Any, ec2: Any, settings: Any, bucket: Any, template: Any) -> Any:
        """SsmAgents on a local SSM agent: the template's document, run on local instances that
        reach moto's backends over HTTP (moto's server mode, sharing this process's state)."""
        import boto3
        import botocore.config
        from moto.server import ThreadedMotoServer

        from storagebench_local.adapters.instance_agents import LocalSsmAgents
        from storagebench_local.ssm.agent import LocalSsmAgent
        from storagebench_local.ssm.document import agent_document
        from storagebench_local.ssm.instance import Tools

        ssm.create_document(
            Name=settings.agent_document,
            Content=json.dumps(agent_document(template).content),
            DocumentType="Command",
            DocumentFormat="JSON",
        )
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per instance request otherwise
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        if self.aws_calls is not None:  # the instances' calls arrive here
            self.aws_calls.wrap_server(server)
        self._stack.callback(server.stop)
        host, port = server.get_host_and_port()
        self.aws_endpoint = f"http://{host}:{port}"
        # presigned GETs must name the address the instance reaches: moto's server, not the in-process mock
        presigner = boto3.client(
            "s3",
            region_name=REGION,
            endpoint_url=self.aws_endpoint,
            config=botocore.config.Config(signature_version="s3v4"),
        )
        twin = self.options.twin_program
        tools = Tools(
            imds_mock=TOOLS / "bin" / "ec2-metadata-mock",
            twin=Path(twin) if twin else None,
            nfs_client=NFS_CLIENT if self.gateway_refusal is None else None,
        )
        self.ssm_agent = self._stack.enter_context(
            LocalSsmAgent(
                ssm,
                s3,
                ec2,
                self.root / "instances",
                tools,
                self.aws_endpoint,
                self.image_root,
                image_for=self._image_for,
            )
        )
        agents = LocalSsmAgents(
            ssm,
            s3,
            settings,
            bucket,
            self.ssm_agent,
            self.options,
            str(self.mount_root),
            str(self.volumes_dir),
            self.faults,
            presigner=presigner,
            sfn=boto3.client("stepfunctions", region_name=REGION),
        )
        if agents.refusal is not None:
            self._stack.callback(agents.refusal.close)
        return agents

    def _results_client(self, template: Any) -> Any:
        from storagebench_local.dynamodb_local import DynamoDBLocalUnavailable
        from storagebench_local.dynamodb_shared import shared_dynamodb_local

        if not self.use_dynamodb_local:
            self.notices.append("DynamoDB Local not used: results are kept in memory for this run only")
            return None
        try:
            server = self._stack.enter_context(shared_dynamodb_local(self.root))
        except DynamoDBLocalUnavailable as exc:
            self.notices.append(
                f"DynamoDB Local unavailable ({exc}): results are kept in memory for this run "
                "only, and `storagebench results` cannot show them later"
            )
            return None
        self.dynamodb_endpoint = server.endpoint_url
        client = server.client(region_name=REGION)
        self._ensure_table(client, template)
        return client

    @staticmethod
    def _ensure_table(client: Any, template: Any) -> None:
        if TABLE in client.list_tables().get("TableNames", []):
            return
        client.create_table(**template.table_kwargs("ResultsTable", TABLE))
        client.get_waiter("table_exists").wait(TableName=TABLE)

    def _network(self) -> dict[str, str]:
        """What the EC2 adapter expects a deployed stack to provide: subnet, group, profile, AMI."""
        import boto3

        from storagebench_local.adapters.moto_ec2 import loopback_address_range

        ec2 = boto3.client("ec2", region_name=REGION)
        vpc = ec2.create_vpc(CidrBlock="10.42.0.0/16")["Vpc"]["VpcId"]
        subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.42.1.0/24", AvailabilityZone=f"{REGION}a")[
            "Subnet"
        ]
        group = ec2.create_security_group(GroupName="storagebench-local", Description="no inbound", VpcId=vpc)
        self._fence(loopback_address_range(subnet["CidrBlock"]))
        iam = boto3.client("iam", region_name=REGION)
        role = iam.create_role(RoleName="storagebench-local-instance", AssumeRolePolicyDocument="{}")["Role"]
        profile = iam.create_instance_profile(InstanceProfileName="storagebench-local")["InstanceProfile"]
        iam.add_role_to_instance_profile(
            InstanceProfileName="storagebench-local", RoleName="storagebench-local-instance"
        )
        # moto serves the public AL2023 AMI parameters itself; the other catalog images (Ubuntu,
        # Debian, RHEL) are published the way their vendors do (public_images).
        from storagebench_local.public_images import publish

        self.published_images = publish(ACCOUNT, REGION)
        return {
            "subnet": subnet["SubnetId"],
            "group": group["GroupId"],
            "profile": profile["Arn"],
            "role_id": role["RoleId"],
        }

    def _fence(self, cidr: str) -> None:
        """The local instances' security group (``fence``): as root, required; otherwise said."""
        from storagebench_local.fence import fence_unavailable, loopback_fence

        if os.geteuid() != 0:
            self.notices.append(f"local instances on {cidr} are not fenced: {fence_unavailable()}")
            return
        self._stack.enter_context(loopback_fence(cidr))  # FenceError: the session does not start

    def _image_for(self, image_id: str) -> Path | None:
        """The root an instance of this AMI boots locally: Debian 12's cached root for the
        debian-12 images (built with debootstrap on first use), this machine's for the others."""
        debian = {ami for name, ami in self.published_images.items() if name.startswith("debian-12/")}
        if image_id in debian:
            from storagebench_local.ssm.image_root import debian_root

            return debian_root(IMAGE_CACHE)[0]
        return None

    def _serve_functions(self, template: Any) -> None:
        from storagebench_local.lambda_endpoint import LocalLambda

        endpoint = self._stack.enter_context(LocalLambda(template.functions({}), before_invoke=self._inject))
        self._stack.enter_context(_environment({"AWS_ENDPOINT_URL_LAMBDA": endpoint.endpoint_url}))

    def _inject(self, function: str, event: Any) -> None:
        """Fault point ``handler.<FunctionLogicalId>`` for the config the event is about."""
        if self.aws_calls is not None:  # this thread's calls are the function's from here on
            self.aws_calls.invoking(function)
        config_id = "*"
        if isinstance(event, dict):
            state = event.get("state", event)
            item = state.get("item") if isinstance(state, dict) else None
            if isinstance(item, dict):
                config_id = str(item.get("config_id", "*"))
        self.faults.raise_if(f"handler.{function}", config_id)

    def _create_state_machine(self, template: Any) -> str:
        import boto3

        # The Distributed Map's ItemReader reads the work items from the artifacts bucket.
        bucket = {"ArtifactsBucket": ARTIFACTS_BUCKET}
        definition = template.state_machine("BenchmarkStateMachine", bucket, region=REGION, account=ACCOUNT)
        if self.fast_retries:
            definition = json.dumps(fast_retries(json.loads(definition)))
        sfn = boto3.client("stepfunctions", region_name=REGION)
        arn: str = sfn.create_state_machine(
            name="storagebench-benchmark",
            definition=definition,
            roleArn=f"arn:aws:iam::{ACCOUNT}:role/storagebench-states",
        )["stateMachineArn"]
        return arn

    # ------------------------------------------------------------------ where an instance wrote

    def instance_prefix(
        self, run_id: str, config_id: str, node: str | None = None, *, max_age_s: float = 0.0
    ) -> str | None:
        """The artifacts prefix of the instance that runs (or ran) a config, None before its launch.

        The newest instance tagged with the config: a relaunch writes under its own prefix. Its
        primary client unless ``node`` names another machine (``server-0``, ``client-1``). A
        poller passes ``max_age_s`` to take an answer found that recently without asking again.
        """
        import boto3

        from storagebench.core.tags import TAG_CONFIG, TAG_NODE, TAG_RUN
        from storagebench.workflow.artifact_keys import instance_prefix_of

        if self.services is None:
            return None
        key = (run_id, config_id, node)
        known = self._prefixes.get(key)
        if known is not None and time.monotonic() - known[0] < max_age_s:
            return known[1]
        filters = [
            {"Name": f"tag:{TAG_RUN}", "Values": [run_id]},
            {"Name": f"tag:{TAG_CONFIG}", "Values": [config_id]},
        ]
        if self._prefix_ec2 is None:
            # One client for every look: run --local asks for each config twice a second, and a
            # new client costs tens of ms of CPU that the emulated volumes' fio then misses.
            self._prefix_ec2 = boto3.client("ec2", region_name=REGION)
        reservations = self._prefix_ec2.describe_instances(Filters=filters)
        instances = [
            i
            for r in reservations["Reservations"]
            for i in r["Instances"]
            if {t["Key"]: t["Value"] for t in i.get("Tags", [])}.get(TAG_NODE) == node
        ]
        if not instances:
            return None
        newest = max(instances, key=lambda i: str(i.get("LaunchTime", "")))
        prefix = instance_prefix_of(run_id, config_id, self.services.agents.principal(newest["InstanceId"]))
        self._prefixes[key] = (time.monotonic(), prefix)
        return prefix

    # ------------------------------------------------------------------ what is left

    def leaks(self, run_id: str) -> list[str]:
        """Everything of a run still alive: instances, volumes, file systems, loops, mounts, cgroups."""
        import boto3

        from storagebench.agent.sweep import resources_of
        from storagebench.core.tags import TAG_CONFIG, TAG_RUN

        leaked: list[str] = []
        ec2 = boto3.client("ec2", region_name=REGION)
        run_filter = [{"Name": f"tag:{TAG_RUN}", "Values": [run_id]}]
        for reservation in ec2.describe_instances(Filters=run_filter)["Reservations"]:
            for instance in reservation["Instances"]:
                if instance["State"]["Name"] not in ("shutting-down", "terminated"):
                    leaked.append(f"instance {instance['InstanceId']} ({instance['State']['Name']})")
        for volume in ec2.describe_volumes(Filters=run_filter)["Volumes"]:
            attachments = [a for a in volume.get("Attachments", []) if a.get("State") != "detached"]
            if volume["State"] not in ("deleting", "deleted") and not attachments:
                leaked.append(f"volume {volume['VolumeId']} ({volume['State']})")
        efs = boto3.client("efs", region_name=REGION)
        for fs in efs.describe_file_systems()["FileSystems"]:
            tags = {t["Key"]: t["Value"] for t in fs.get("Tags", [])}
            if tags.get(TAG_RUN) == run_id and fs["LifeCycleState"] not in ("deleting", "deleted"):
                leaked.append(f"efs {fs['FileSystemId']}")
        fsx = boto3.client("fsx", region_name=REGION)
        for fs in fsx.describe_file_systems()["FileSystems"]:
            tags = {t["Key"]: t["Value"] for t in fs.get("Tags", [])}
            if tags.get(TAG_RUN) == run_id:
                leaked.append(f"fsx {fs['FileSystemId']}")
        for group in ec2.describe_security_groups(Filters=run_filter)["SecurityGroups"]:
            leaked.append(f"security group {group['GroupId']}")
        for placement in ec2.describe_placement_groups(Filters=run_filter)["PlacementGroups"]:
            leaked.append(f"placement group {placement['GroupName']}")
        if self.gateway_host is not None:
            configs = {a.tags.get(TAG_CONFIG, "") for a in self.gateway_host.appliances.values()}
            for config in sorted(configs):
                leaked.extend(self.gateway_host.leftovers(run_id, config))
        machine = resources_of(run_id, str(self.mount_root), str(self.volumes_dir))
        for kind in ("mounts", "arrays", "loops", "cgroups", "twins", "twin_mounts"):
            leaked.extend(f"{kind[:-1].replace('_', ' ')} {item}" for item in machine[kind])
        return leaked

    # ------------------------------------------------------------------ running

    def start(self, request: dict[str, Any], run_id: str | None = None) -> tuple[str, str]:
        import boto3

        run_id = run_id or new_run_id(str(request.get("name", "run")))
        sfn = boto3.client("stepfunctions", region_name=REGION)
        arn = sfn.start_execution(
            stateMachineArn=self.state_machine_arn, name=run_id, input=json.dumps(request)
        )["executionArn"]
        return run_id, arn

    def wait(
        self,
        run_id: str,
        arn: str,
        on_poll: Callable[[str], None] | None = None,
        poll_s: float = 0.5,
        timeout_s: float = 3600,
    ) -> Execution:
        import boto3

        sfn = boto3.client("stepfunctions", region_name=REGION)
        started = time.monotonic()
        while True:
            described = sfn.describe_execution(executionArn=arn)
            if described["status"] != "RUNNING":
                break
            if time.monotonic() - started > timeout_s:
                sfn.stop_execution(
                    executionArn=arn, error="LocalTimeout", cause=f"no result after {timeout_s:.0f} s"
                )
            if on_poll is not None:
                on_poll(run_id)
            time.sleep(poll_s)
        history = _history(sfn, arn)
        children = [
            _history(sfn, child["executionArn"])
            for run in sfn.list_map_runs(executionArn=arn)["mapRuns"]
            for child in _children(sfn, run["mapRunArn"])
        ]
        output = json.loads(described["output"]) if described.get("output") else None
        return Execution(
            run_id=run_id,
            arn=arn,
            status=described["status"],
            output=output,
            error=described.get("error"),
            cause=described.get("cause"),
            wall_s=time.monotonic() - started,
            history=history,
            child_histories=children,
        )

    def run(
        self, request: dict[str, Any], run_id: str | None = None, on_poll: Callable[[str], None] | None = None
    ) -> Execution:
        run_id, arn = self.start(request, run_id)
        return self.wait(run_id, arn, on_poll)
