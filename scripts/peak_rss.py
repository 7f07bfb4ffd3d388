#!/usr/bin/env python3
"""Runs a command (stdout discarded) and prints its wall time and the peak of its anonymous and
file-backed resident memory (RssAnon, RssFile from /proc/PID/status, sampled every 2 ms):
`peak_rss.py CMD...` prints `wall_s rss_anon_kb rss_file_kb`."""
import subprocess
import sys
import time

t0 = time.monotonic()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
anon = file = 0
while p.poll() is None:
    try:
        with open(f"/proc/{p.pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    anon = max(anon, int(line.split()[1]))
                elif line.startswith("RssFile:"):
                    file = max(file, int(line.split()[1]))
    except OSError:
        pass
    time.sleep(0.002)
wall = time.monotonic() - t0
if p.returncode != 0:
    sys.exit(f"{sys.argv[1:]} exited {p.returncode}")
print(f"{wall:.4f} {anon} {file}")
