#!/usr/bin/env python3
"""Per-request latency of one route, for benches/api.sh: CONNECTIONS keep-alive connections, each
sending one GET at a time for SECONDS, every answer timed on its own. Prints the median, the
99th percentile and how many answers took over 30 ms (a response whose body waited for the
client's delayed ACK). wrk's own latency figures are not used: on loaded runs they disagree with
its request count (a mean that its connections, one request at a time, could not have had).

Usage: latency.py PORT PATH CONNECTIONS SECONDS
"""
import http.client
import sys
import threading
import time

STALL_SECONDS = 0.030


def main():
    port, path = int(sys.argv[1]), sys.argv[2]
    connections, seconds = int(sys.argv[3]), float(sys.argv[4])
    latencies, failures, lock = [], [], threading.Lock()
    deadline = time.monotonic() + seconds

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        mine = []
        try:
            while time.monotonic() < deadline:
                start = time.perf_counter()
                conn.request("GET", path)
                response = conn.getresponse()
                response.read()
                mine.append(time.perf_counter() - start)
        except (OSError, http.client.HTTPException) as e:
            with lock:
                failures.append(repr(e))
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if not latencies:
        print(f"no answers: {failures[:1]}")
        return 1
    latencies.sort()

    def percentile(p):
        return latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))] * 1000

    stalls = sum(1 for x in latencies if x > STALL_SECONDS)
    line = f"p50 {percentile(50):.2f}ms  p99 {percentile(99):.2f}ms  over 30 ms: {stalls} of {len(latencies)}"
    if failures:
        line += f"  ({len(failures)} connection(s) failed: {failures[0]})"
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
