"""An S3 File Gateway for one config: appliance, activation, cache, NFS share, teardown.

Pure logic behind ports (``gateway.ports``): the AWS adapters are in ``adapters.aws.storagegateway``
and ``adapters.aws.gateway_appliance``; the activation key is fetched over HTTP from inside the VPC
(``adapters.activation``).
"""
