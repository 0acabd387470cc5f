"""What a config's File Gateway is made of, as recorded between readiness polls."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ApplianceStatus(_Model):
    """The appliance's EC2 instance as the provider reports it."""

    instance_id: str
    state: str = Field(description="pending, running, shutting-down, terminated, ...")
    private_ip: str | None = None
    volume_ids: list[str] = Field(default_factory=list)


class LocalDisk(_Model):
    """One disk the gateway sees (ListLocalDisks)."""

    disk_id: str
    size_bytes: int
    allocation: str = Field(description="AVAILABLE, CACHE STORAGE, UPLOAD BUFFER, ... as the gateway says")
    status: str | None = None


class ShareSpec(_Model):
    """The NFS share: its S3 location, the role the gateway writes with, who may mount it."""

    location_arn: str = Field(description="arn:aws:s3:::bucket/prefix/ (S3 File Gateway: bucket and prefix)")
    role_arn: str
    client_cidrs: list[str] = Field(min_length=1, description="the client's address(es), /32 each")
    client_token: str = Field(min_length=5, max_length=100)
    file_share_name: str
    tags: dict[str, str]


class GatewayRelease(_Model):
    deleted: list[str] = Field(default_factory=list)
    leftovers: list[str] = Field(default_factory=list)


class ActivationRequest(_Model):
    """What the activator function is asked: the appliance's private address and the gateway's region."""

    appliance_ip: str = Field(pattern=r"^\d{1,3}(\.\d{1,3}){3}$", description="private IPv4 address")
    region: str = Field(pattern=r"^[a-z]{2}(-[a-z]+)+-\d$")
