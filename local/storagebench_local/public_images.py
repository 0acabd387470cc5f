"""The public images AWS serves and moto does not: Canonical's, Debian's and Red Hat's.

moto 5.2.5 serves Amazon Linux's public AMI parameters only, and refuses ``put_parameter`` under
``/aws/`` as AWS does. Local mode publishes the catalog's other images the way their vendors do:
an AMI owned by the vendor's account, with the architecture and root device it has on AWS, and,
where the vendor publishes one, the public parameter pointing at it (Red Hat publishes none: its
images are found by owner and name). What boots locally is still this machine or the cached
Debian root; what this exercises is the launch's resolution of the image (parameter or name,
owner, architecture, root device), not the image's contents.
"""

from __future__ import annotations

from datetime import UTC, datetime

from storagebench.catalog.images import named_images

# Where each family's AMIs boot from on AWS (what DescribeImages reports as RootDeviceName).
ROOT_DEVICES = {"amzn": "/dev/xvda", "debian": "/dev/xvda", "ubuntu": "/dev/sda1", "rhel": "/dev/sda1"}
PUBLISHED = datetime(2026, 11, 1, tzinfo=UTC)


def publish(account_id: str, region: str) -> dict[str, str]:
    """Publish every catalog image moto lacks; returns ``{"<image>/<arch>": ami_id}``."""
    from moto.ec2.models import ec2_backends
    from moto.ec2.models.amis import Ami
    from moto.ec2.utils import random_ami_id
    from moto.ssm.models import Parameter, ssm_backends

    ec2 = ec2_backends[account_id][region]
    parameters = ssm_backends[account_id][region]._parameters
    published: dict[str, str] = {}
    for name, spec in named_images().items():
        if spec.family == "amzn":
            continue  # moto serves these itself
        owner = spec.owners[0]
        for arch in spec.architectures:
            ami_id = random_ami_id()
            pattern = spec.name_patterns.get(arch)
            image_name = pattern.replace("*", "0") if pattern else f"{name}-{arch}-storagebench-local"
            ec2.amis[ami_id] = Ami(
                ec2,
                ami_id,
                name=image_name,
                description=f"{spec.title} ({arch}), published by storagebench local mode",
                owner_id=owner,
                public=True,
                virtualization_type="hvm",
                architecture=arch,
                root_device_type="ebs",
                root_device_name=ROOT_DEVICES[spec.family],
                creation_date=PUBLISHED,
                region_name=region,
            )
            published[f"{name}/{arch}"] = ami_id
            parameter = spec.ssm_parameters.get(arch)
            if parameter:
                # straight into moto's table: put_parameter refuses /aws/ paths, as AWS does
                parameters[parameter].append(
                    Parameter(  # type: ignore[abstract]  # moto builds them the same way
                        account_id=account_id,
                        name=parameter,
                        value=ami_id,
                        parameter_type="String",
                        description=None,
                        allowed_pattern=None,
                        keyid=None,
                        last_modified_date=PUBLISHED.timestamp(),  # type: ignore[arg-type]  # moto's loader passes the epoch too
                        version=1,
                        data_type="aws:ec2:image",
                    ),
                )
    return published
