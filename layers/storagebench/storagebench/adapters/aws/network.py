"""A config's own network on EC2: one security group its nodes share, and a placement group.

The group admits each of the config's port rules from itself alone (a self-referencing source
group): the config's nodes reach each other on exactly those ports, and nothing else reaches them
through it. Its egress is the same ports to itself: the default allow-all egress rule of a new group
is revoked, because security groups on one interface add up and an allow-all rule would widen what
the stack's instance group lets an instance reach (HTTPS to the AWS APIs, NFS, Lustre).

Names are derived from the run and the config (``network_name``), so ``open`` is idempotent: a
retried Provision meets InvalidGroup.Duplicate (or InvalidPlacementGroup.Duplicate) and describes
what the first call created, after checking it carries this config's tags. The VPC is the stack
subnet's. Both groups are created with their tags (TagSpecifications), which IAM requires
(``aws:RequestTag/storagebench:stack``), so cleanup, the leftover check and the janitor find them by
tag as they find instances. A group cannot be deleted while an instance still uses it: EC2 answers
DependencyViolation (a placement group: InvalidPlacementGroup.InUse) until the instance has
terminated, which becomes ResourceBusyError, retried by Cleanup.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from storagebench.adapters.aws.errors import ClientError, aws_call, error_code, workflow_error
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.core.errors import ProvisioningError, ResourceBusyError
from storagebench.core.state import NetworkRef, NetworkSpec, PortRule
from storagebench.core.tags import TAG_CONFIG, TAG_RUN

GROUP_NOT_FOUND = frozenset({"InvalidGroup.NotFound", "InvalidGroupId.NotFound"})
PLACEMENT_NOT_FOUND = frozenset({"InvalidPlacementGroup.Unknown", "InvalidPlacementGroup.NotFound"})
PLACEMENT_IN_USE = "InvalidPlacementGroup.InUse"
PLACEMENT_GOING = ("deleting", "deleted")
# Where a permission's traffic comes from (goes to), and the field naming each source
SOURCES = {
    "IpRanges": "CidrIp",
    "Ipv6Ranges": "CidrIpv6",
    "PrefixListIds": "PrefixListId",
    "UserIdGroupPairs": "GroupId",
}
# What a security group description may hold (EC2's rule), everything else becomes "-"
_DESCRIPTION_REFUSED = re.compile(r"[^a-zA-Z0-9 ._\-:/()#,@\[\]+=&;{}!$*]")


def network_name(run_id: str, config_id: str) -> str:
    """The name of the config's security group and placement group: the same for every retry."""
    return "sb-" + hashlib.sha256(f"{run_id}\n{config_id}".encode()).hexdigest()[:32]


def _tags(tags: dict[str, str]) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in sorted(tags.items())]


def _tag_map(described: dict[str, Any]) -> dict[str, str]:
    return {str(t["Key"]): str(t["Value"]) for t in described.get("Tags") or []}


def permission(rule: PortRule, group_id: str) -> dict[str, Any]:
    """One IpPermission: the rule's ports from (or to) the group itself."""
    return {
        "IpProtocol": rule.protocol,
        "FromPort": rule.from_port,
        "ToPort": rule.to_port,
        "UserIdGroupPairs": [{"GroupId": group_id, "Description": "the config's own nodes"}],
    }


def _grants(described: list[dict[str, Any]], rule: PortRule, group_id: str) -> bool:
    """Whether a group's described permissions already hold the rule from (to) the group itself."""
    return any(
        str(p.get("IpProtocol")) == rule.protocol
        and p.get("FromPort") == rule.from_port
        and p.get("ToPort") == rule.to_port
        and any(pair.get("GroupId") == group_id for pair in p.get("UserIdGroupPairs") or [])
        for p in described
    )


def _foreign(described: list[dict[str, Any]], rules: list[PortRule], group_id: str) -> list[dict[str, Any]]:
    """What a group's described permissions hold besides the rules to the group itself, as the
    permissions that revoke it (a new group's default allow-all egress, or a rule added by hand)."""
    wanted = {(r.protocol, r.from_port, r.to_port) for r in rules}
    foreign = []
    for p in described:
        ours = (str(p.get("IpProtocol")), p.get("FromPort"), p.get("ToPort")) in wanted
        sources: dict[str, Any] = {}
        for name, key in SOURCES.items():
            values = [{key: v[key]} for v in p.get(name) or []]
            if name == "UserIdGroupPairs" and ours:
                values = [v for v in values if v[key] != group_id]
            if values:
                sources[name] = values
        if sources:
            revoke: dict[str, Any] = {"IpProtocol": p["IpProtocol"]}
            revoke.update({k: p[k] for k in ("FromPort", "ToPort") if k in p})
            foreign.append({**revoke, **sources})
    return foreign


class Ec2Network:
    """``Network`` on EC2: a security group in the VPC of the stack's subnet, and a placement group."""

    def __init__(self, ec2: Any, settings: AwsSettings) -> None:
        self.ec2 = ec2
        self.settings = settings

    @classmethod
    def from_settings(cls, settings: AwsSettings) -> Ec2Network:
        return cls(settings.client("ec2"), settings)

    # -------------------------------------------------------------- open

    def open(self, spec: NetworkSpec) -> NetworkRef:
        group_id = self._security_group(spec)
        self._admit_own_nodes(group_id, spec.ingress)
        placement = self._placement_group(spec) if spec.placement is not None else None
        return NetworkRef(security_group_id=group_id, placement_group=placement)

    def vpc_id(self) -> str:
        """The VPC of the stack's subnet: where the instances are, so where their group must be."""
        subnet = self.settings.subnet_id
        with aws_call(f"describe the stack's subnet {subnet}", ProvisioningError):
            found = self.ec2.describe_subnets(SubnetIds=[subnet])["Subnets"]
        if not found:
            raise ProvisioningError(f"the stack's subnet {subnet} does not exist: its VPC cannot be found")
        return str(found[0]["VpcId"])

    def _security_group(self, spec: NetworkSpec) -> str:
        name = network_name(spec.run_id, spec.config_id)
        vpc = self.vpc_id()
        description = _DESCRIPTION_REFUSED.sub(
            "-", f"storagebench {spec.run_id}/{spec.config_id}: its nodes, on their ports, from each other"
        )[:255]
        try:
            created = self.ec2.create_security_group(
                GroupName=name,
                Description=description,
                VpcId=vpc,
                TagSpecifications=[{"ResourceType": "security-group", "Tags": _tags(spec.tags)}],
            )
        except ClientError as exc:
            if error_code(exc) != "InvalidGroup.Duplicate":
                raise workflow_error(exc, f"create security group {name}", ProvisioningError) from exc
            return self._existing_group(name, vpc, spec)
        return str(created["GroupId"])

    def _existing_group(self, name: str, vpc: str, spec: NetworkSpec) -> str:
        """The group an earlier attempt created (a retry), refused when it is not this config's."""
        filters = [{"Name": "group-name", "Values": [name]}, {"Name": "vpc-id", "Values": [vpc]}]
        with aws_call(f"describe security group {name}", ProvisioningError):
            found = self.ec2.describe_security_groups(Filters=filters)["SecurityGroups"]
        if not found:
            raise ProvisioningError(
                f"security group {name} exists in {vpc} by EC2's word but cannot be described"
            )
        group = found[0]
        tags = _tag_map(group)
        if tags.get(TAG_RUN) != spec.run_id or tags.get(TAG_CONFIG) != spec.config_id:
            raise ProvisioningError(
                f"security group {name} ({group['GroupId']}) in {vpc} is not run {spec.run_id} config "
                f"{spec.config_id}'s (its tags: {tags}): refusing to open another config's group"
            )
        return str(group["GroupId"])

    def _admit_own_nodes(self, group_id: str, rules: list[PortRule]) -> None:
        """Each rule from the group itself, in and out; every other rule goes (the default egress)."""
        group = self._describe_group(group_id)
        if group is None:
            raise ProvisioningError(f"security group {group_id} vanished while being opened")
        ingress = [permission(r, group_id) for r in rules if not _grants(group["IpPermissions"], r, group_id)]
        egress = [
            permission(r, group_id) for r in rules if not _grants(group["IpPermissionsEgress"], r, group_id)
        ]
        if ingress:
            self._authorize("ingress", group_id, ingress)
        if egress:
            self._authorize("egress", group_id, egress)
        foreign_in = _foreign(group["IpPermissions"], rules, group_id)
        foreign_out = _foreign(group["IpPermissionsEgress"], rules, group_id)
        if foreign_in:
            self._revoke("ingress", group_id, foreign_in)
        if foreign_out:
            self._revoke("egress", group_id, foreign_out)

    def _authorize(self, direction: str, group_id: str, permissions: list[dict[str, Any]]) -> None:
        call = getattr(self.ec2, f"authorize_security_group_{direction}")
        for one in permissions:  # one at a time: a rule a concurrent retry added fails only itself
            try:
                call(GroupId=group_id, IpPermissions=[one])
            except ClientError as exc:
                if error_code(exc) != "InvalidPermission.Duplicate":
                    raise workflow_error(exc, f"open {direction} of {group_id}", ProvisioningError) from exc

    def _revoke(self, direction: str, group_id: str, permissions: list[dict[str, Any]]) -> None:
        call = getattr(self.ec2, f"revoke_security_group_{direction}")
        for one in permissions:
            try:
                call(GroupId=group_id, IpPermissions=[one])
            except ClientError as exc:
                if error_code(exc) != "InvalidPermission.NotFound":
                    raise workflow_error(exc, f"close {direction} of {group_id}", ProvisioningError) from exc

    def _placement_group(self, spec: NetworkSpec) -> str:
        name = network_name(spec.run_id, spec.config_id)
        try:
            self.ec2.create_placement_group(
                GroupName=name,
                Strategy=spec.placement,
                TagSpecifications=[{"ResourceType": "placement-group", "Tags": _tags(spec.tags)}],
            )
        except ClientError as exc:
            if error_code(exc) != "InvalidPlacementGroup.Duplicate":
                raise workflow_error(exc, f"create placement group {name}", ProvisioningError) from exc
            self._check_existing_placement_group(name, spec)
        return name

    def _check_existing_placement_group(self, name: str, spec: NetworkSpec) -> None:
        """The group an earlier attempt created (a retry), refused when it is not this config's."""
        existing = self._describe_placement_group(name)
        if existing is None:
            raise ProvisioningError(f"placement group {name} exists by EC2's word but cannot be described")
        tags = _tag_map(existing)
        if tags.get(TAG_RUN) != spec.run_id or tags.get(TAG_CONFIG) != spec.config_id:
            raise ProvisioningError(
                f"placement group {name} is not run {spec.run_id} config {spec.config_id}'s (its tags: "
                f"{tags}): refusing to use another config's group"
            )
        if existing.get("Strategy") != spec.placement:
            raise ProvisioningError(
                f"placement group {name} has strategy {existing.get('Strategy')}, not {spec.placement}: "
                "refusing to place the config's nodes otherwise than asked"
            )

    # -------------------------------------------------------------- close

    def close(self, ref: NetworkRef) -> list[str]:
        """The security group, then the placement group; each already gone is done."""
        deleted: list[str] = []
        if ref.security_group_id is not None:
            try:
                self.ec2.delete_security_group(GroupId=ref.security_group_id)
            except ClientError as exc:
                if error_code(exc) not in GROUP_NOT_FOUND:
                    # DependencyViolation (an instance still holds it): ResourceBusyError, retried
                    raise workflow_error(
                        exc, f"delete security group {ref.security_group_id}", ProvisioningError
                    ) from exc
            else:
                deleted.append(ref.security_group_id)
        if ref.placement_group is not None:
            try:
                self.ec2.delete_placement_group(GroupName=ref.placement_group)
            except ClientError as exc:
                code = error_code(exc)
                if code == PLACEMENT_IN_USE:
                    raise ResourceBusyError(
                        f"placement group {ref.placement_group} still holds instances: {code}; it is "
                        "deleted once they have terminated"
                    ) from exc
                if code not in PLACEMENT_NOT_FOUND:
                    raise workflow_error(
                        exc, f"delete placement group {ref.placement_group}", ProvisioningError
                    ) from exc
            else:
                deleted.append(ref.placement_group)
        return deleted

    # -------------------------------------------------------------- lookups

    def find(self, run_id: str, config_id: str) -> list[NetworkRef]:
        filters = [
            {"Name": f"tag:{TAG_RUN}", "Values": [run_id]},
            {"Name": f"tag:{TAG_CONFIG}", "Values": [config_id]},
        ]
        groups = [str(g["GroupId"]) for g in self.security_groups(filters)]
        placements = [str(p["GroupName"]) for p in self.placement_groups(filters)]
        refs = [NetworkRef(security_group_id=g) for g in groups]
        refs += [NetworkRef(placement_group=p) for p in placements]
        return refs

    def leftovers(self, run_id: str, config_id: str) -> list[str]:
        return [str(ref.security_group_id or ref.placement_group) for ref in self.find(run_id, config_id)]

    def security_groups(self, filters: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Security groups matching the filters (the janitor lists the stack's with it)."""
        with aws_call("describe security groups", ProvisioningError):
            pages = self.ec2.get_paginator("describe_security_groups").paginate(Filters=filters)
            return [g for page in pages for g in page["SecurityGroups"]]

    def placement_groups(self, filters: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Placement groups matching the filters, without those being deleted (not paginated by EC2)."""
        with aws_call("describe placement groups", ProvisioningError):
            found = self.ec2.describe_placement_groups(Filters=filters)["PlacementGroups"]
        return [p for p in found if p.get("State") not in PLACEMENT_GOING]

    def _describe_group(self, group_id: str) -> dict[str, Any] | None:
        try:
            found = self.ec2.describe_security_groups(GroupIds=[group_id])["SecurityGroups"]
        except ClientError as exc:
            if error_code(exc) in GROUP_NOT_FOUND:
                return None
            raise workflow_error(exc, f"describe security group {group_id}", ProvisioningError) from exc
        return found[0] if found else None

    def _describe_placement_group(self, name: str) -> dict[str, Any] | None:
        try:
            found = self.ec2.describe_placement_groups(GroupNames=[name])["PlacementGroups"]
        except ClientError as exc:
            if error_code(exc) in PLACEMENT_NOT_FOUND:
                return None
            raise workflow_error(exc, f"describe placement group {name}", ProvisioningError) from exc
        return found[0] if found else None
