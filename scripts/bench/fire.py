#!/usr/bin/env python3
"""Fires exactly TOTAL chat-completion POSTs at CONCURRENCY, spread in turn over the relay
URLs given, and prints how many answers each status had ("200 N", "429 M", one a line).
For scripts/bench-store.sh: wrk measures for a time, this counts calls.

    fire.py TOTAL CONCURRENCY TOKEN URL [URL...]
"""

import collections
import http.client
import sys
import threading
import urllib.parse

BODY = b'{"model":"bench-model","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}'


def main():
    total, concurrency, token = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    urls = [urllib.parse.urlsplit(url) for url in sys.argv[4:]]
    statuses = collections.Counter()
    lock = threading.Lock()
    turn = iter(range(total))

    def worker():
        connections = {}
        while True:
            with lock:
                i = next(turn, None)
            if i is None:
                return
            url = urls[i % len(urls)]
            connection = connections.get(url.netloc)
            if connection is None:
                connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
                connections[url.netloc] = connection
            connection.request(
                "POST",
                url.path,
                BODY,
                {"content-type": "application/json", "authorization": "Bearer " + token},
            )
            answer = connection.getresponse()
            answer.read()
            with lock:
                statuses[answer.status] += 1

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for status, count in sorted(statuses.items()):
        print(status, count)


if __name__ == "__main__":
    main()
