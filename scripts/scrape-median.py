#!/usr/bin/env python3
# scrape-median.py NAME PORT COUNT [gzip-only]: COUNT scrapes of http://127.0.0.1:PORT/metrics
# (after a tenth as many to warm up), a new connection each, gzip asked for as Prometheus asks;
# prints the median and p99 in milliseconds and the exposition's size plain and gzipped
# (gzip-only: the plain size from the gzipped answer, with no uncompressed scrape). Run it in
# the namespace of what it scrapes (scripts/bench-metrics, scripts/bench-views).
import gzip, http.client, statistics, sys, time
name, port, count, gzip_only = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "gzip-only"
def get(encoding):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/metrics", headers={"Accept-Encoding": encoding})
    body = connection.getresponse().read()
    connection.close()
    return body
packed = get("gzip")
plain = gzip.decompress(packed) if gzip_only else get("identity")
assert gzip.decompress(packed).count(b"\n") > 0
times = []
for _ in range(count + count // 10):
    started = time.perf_counter()
    get("gzip")
    times.append(time.perf_counter() - started)
times = sorted(times[count // 10:])
median = statistics.median(times) * 1000
p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1000
print(f"{median:.2f} {p99:.2f} {len(plain)} {len(packed)}")
