"""Records of one workload run on several clients at once (fio's client/server mode).

A multi-client step runs ``fio --client=<h1> job --client=<h2> job ...``: every ``fio --server``
starts the job together, and the JSON holds each client's job entries (``client_stats`` with
``hostname``/``port``) plus fio's own "All clients" sum. ``output`` splits that JSON into one fio
document per client; ``aggregate`` turns those into per-client records and one aggregate per
(group, direction), the way fio's "All clients" is computed (``client.c: handle_ts`` ->
``stat.c: sum_thread_stats``): I/Os and bytes summed, runtime the longest, IOPS and bandwidth =
sums over that runtime, latency percentiles from the merged json+ histograms, with the clients'
spread and straggler on the aggregate.
"""
