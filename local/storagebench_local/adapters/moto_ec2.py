"""The EC2 adapter as local mode runs it on moto, with moto's one launch defect worked around.

moto 5.2.5 drops ``Iops`` from io1/io2 block device mappings and then rejects the call for
lacking it (InvalidParameterDependency). Locally the volume moto records only stands for the
requested one (the emulated volume follows the request's type, size and IOPS), so io1/io2
are launched there as gp3 without IOPS. Everything else is the AWS adapter unchanged.
"""

from __future__ import annotations

from typing import Any

from storagebench.adapters.aws.ec2 import Ec2Compute, Image
from storagebench.core.state import LaunchSpec


class MotoEc2Compute(Ec2Compute):
    def run_instances_request(self, spec: LaunchSpec, image: Image) -> dict[str, Any]:
        request = super().run_instances_request(spec, image)
        for mapping in request["BlockDeviceMappings"]:
            ebs = mapping.get("Ebs", {})
            if ebs.get("VolumeType") in ("io1", "io2"):
                ebs["VolumeType"] = "gp3"
                ebs.pop("Iops", None)
        return request
