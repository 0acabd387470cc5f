"""EC2 vCPU quotas: what a run needs at once per quota, and the account's quotas read through a port.

``needs`` counts the vCPUs of every instance a request launches (clients, nodes, gateway
appliances; catalog vCPUs), per Service Quotas code (catalog ``vcpu_quotas``: the family's group
and the market it is bought on), at the Map's concurrency. ``check`` compares them with what a
``QuotaReader`` answers (the Service Quotas API on AWS, ``adapters.aws.service_quotas``; the
recorded answer ``recorded.json`` locally and in tests). ``planning.preview`` turns a need over its
quota into a refusal, one within 80 % of it into a warning.
"""
