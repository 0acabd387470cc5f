"""``Appliances`` on EC2: the S3 File Gateway AMI in the stack's subnet, in the appliance's group.

The appliance gets no instance profile (the gateway acts through its own service role and the
share's role) and its own security group, which admits NFS and activation (HTTP 80) only from the
client's and the activator's groups (template.yaml). Termination and leftovers reuse the client's
EC2 code, restricted by the appliance's role tag so the client is never touched here.
"""

from __future__ import annotations

from typing import Any

from storagebench.adapters.aws.ec2 import Ec2Compute, Image
from storagebench.adapters.aws.errors import aws_call
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.core.errors import NotYetConsistentError, ProvisioningError
from storagebench.core.state import ImageRef, LaunchSpec, Resources
from storagebench.core.tags import TAG_ROLE
from storagebench.gateway.models import ApplianceStatus
from storagebench.gateway.plan import APPLIANCE_ROLE

APPLIANCE_AMI_PARAMETER = "/aws/service/storagegateway/ami/FILE_S3/latest"


class _ApplianceCompute(Ec2Compute):
    def __init__(self, ec2: Any, ssm: Any, settings: AwsSettings, security_group_id: str) -> None:
        super().__init__(ec2, ssm, settings)
        self.appliance_group = security_group_id

    def default_image(self, spec: LaunchSpec) -> ImageRef:
        return ImageRef(label="File Gateway appliance", ssm_parameter=APPLIANCE_AMI_PARAMETER)

    def run_instances_request(self, spec: LaunchSpec, image: Image) -> dict[str, Any]:
        request = super().run_instances_request(spec, image)
        request["SecurityGroupIds"] = [self.appliance_group]
        del request["IamInstanceProfile"]
        return request

    @staticmethod
    def _tag_filters(run_id: str, config_id: str) -> list[dict[str, Any]]:
        return [
            *Ec2Compute._tag_filters(run_id, config_id),
            {"Name": f"tag:{TAG_ROLE}", "Values": [APPLIANCE_ROLE]},
        ]


class Ec2Appliances:
    def __init__(self, ec2: Any, ssm: Any, settings: AwsSettings, security_group_id: str) -> None:
        self.compute = _ApplianceCompute(ec2, ssm, settings, security_group_id)
        self.ec2 = ec2

    def launch(self, spec: LaunchSpec) -> ApplianceStatus:
        resources = self.compute.launch(spec)
        return ApplianceStatus(
            instance_id=str(resources.instance_id),
            state="pending",
            volume_ids=[str(v.volume_id) for v in resources.volumes if v.volume_id],
        )

    def status(self, instance_id: str) -> ApplianceStatus:
        with aws_call(f"describe appliance {instance_id}", ProvisioningError):
            reservations = self.ec2.describe_instances(InstanceIds=[instance_id])["Reservations"]
        instance = next((i for r in reservations for i in r["Instances"]), None)
        if instance is None:
            raise NotYetConsistentError(f"appliance {instance_id} is not visible yet")
        volumes = [
            str(m["Ebs"]["VolumeId"])
            for m in instance.get("BlockDeviceMappings") or []
            if m.get("Ebs", {}).get("VolumeId")
        ]
        return ApplianceStatus(
            instance_id=instance_id,
            state=str(instance["State"]["Name"]),
            private_ip=instance.get("PrivateIpAddress"),
            volume_ids=volumes,
        )

    def terminate(self, run_id: str, config_id: str, instance_id: str | None) -> list[str]:
        return self.compute.terminate(Resources(instance_id=instance_id), run_id, config_id)

    def leftovers(self, run_id: str, config_id: str) -> list[str]:
        return self.compute.leftovers(run_id, config_id)
