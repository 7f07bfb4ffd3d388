"""The Python package's benchmark (scripts/bench-python): see that script."""
import os
import subprocess
import sys
import time

import lemma_eval

qrels, run = sys.argv[1], sys.argv[2]
BIN = os.environ["LEMMA_EVAL_BIN"]
MEASURES = ["map", "P.10", "recip_rank", "ndcg_cut.10"]


def timed(f):
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


def command():
    subprocess.run([BIN, "eval", qrels, run, "--quiet", "-o", "/dev/null"], check=True)


def rng(xs):
    return f"{min(xs):.2f}-{max(xs):.2f} s"


# 1. evaluate(path, path) against the command.
py_t, cmd_t = [], []
for _ in range(5):
    py_t.append(timed(lambda: lemma_eval.evaluate(qrels, run))[0])
    cmd_t.append(timed(command)[0])
print(f"evaluate(path, path) on M: {rng(py_t)}; command: {rng(cmd_t)}; "
      f"ratio of medians {sorted(py_t)[2] / sorted(cmd_t)[2]:.2f}")

# 2. pytrec_eval-shaped dicts in memory.
def read(path, col, conv):
    out = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            out.setdefault(p[0], {})[p[2]] = conv(p[col])
    return out


q, r = read(qrels, 3, int), read(run, 4, float)
import pytrec_eval  # noqa: E402

ours_t, theirs_t = [], []
for _ in range(5):
    ours_t.append(timed(lambda: lemma_eval.RelevanceEvaluator(q, MEASURES).evaluate(r))[0])
    theirs_t.append(timed(lambda: pytrec_eval.RelevanceEvaluator(q, MEASURES).evaluate(r))[0])
a = lemma_eval.RelevanceEvaluator(q, MEASURES).evaluate(r)
b = pytrec_eval.RelevanceEvaluator(q, MEASURES).evaluate(r)
assert a == b, "values differ"
print(f"dicts of M in memory (RelevanceEvaluator + evaluate, {', '.join(MEASURES)}): lemma_eval "
      f"{rng(ours_t)}; pytrec_eval {rng(theirs_t)}; speed-up {min(theirs_t) / max(ours_t):.1f}-"
      f"{max(theirs_t) / min(ours_t):.1f}x, ratio of medians "
      f"{sorted(theirs_t)[2] / sorted(ours_t)[2]:.1f}x; values equal")
del q, r, a, b

# 3. Ray, 8 shards, Ray started before the clock.
import ray  # noqa: E402
import lemma_eval.ray  # noqa: E402

ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)


@ray.remote(num_cpus=1)
def worker_rss():
    # VmHWM: this process's peak (ru_maxrss would carry a parent's across fork and exec).
    return [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")][0]


ray_t, cmd_t = [], []
for _ in range(5):
    ray_t.append(timed(lambda: lemma_eval.ray.evaluate(qrels, run, num_shards=8, progress=False))[0])
    cmd_t.append(timed(command)[0])
one = lemma_eval.evaluate(qrels, run)
got = lemma_eval.ray.evaluate(qrels, run, num_shards=8, progress=False)
assert got.summary == one.summary
rss = ray.get([worker_rss.remote() for _ in range(8)])
# A Ray worker's own memory: a fresh Python with ray and lemma_eval imported; then the same
# process after evaluating one of the 8 shards (what a worker adds for its evaluation).
probe = ("import sys, ray, lemma_eval\n"
         "def hwm():\n"
         "    return [int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM')][0]\n"
         "base = hwm()\n"
         "if sys.argv[1] == 'shard':\n"
         f"    lemma_eval.evaluate({qrels!r}, {run!r}, shard=(1, 8), threads=1)\n"
         "print(base, hwm())\n")
idle = subprocess.run([sys.executable, "-c", probe, "idle"], check=True, capture_output=True,
                      text=True).stdout.split()
shard = subprocess.run([sys.executable, "-c", probe, "shard"], check=True, capture_output=True,
                       text=True).stdout.split()
cmd_rss = subprocess.run(["/usr/bin/time", "-f", "%M", BIN, "eval", qrels, run, "--quiet", "-o",
                          "/dev/null", "--threads", "1", "--shard", "1/8"], check=True,
                         capture_output=True, text=True).stderr.strip().splitlines()[-1]
print(f"ray, 8 shards of M, 2 CPUs: {rng(ray_t)}; command: {rng(cmd_t)}; ratio of "
      f"medians {sorted(ray_t)[2] / sorted(cmd_t)[2]:.2f}; summaries equal")
print(f"  peak RSS of the Ray workers {min(rss) / 1024:.0f}-{max(rss) / 1024:.0f} MB; a Python with "
      f"ray and lemma_eval imported {int(idle[1]) / 1024:.0f} MB, {int(shard[1]) / 1024:.0f} MB "
      f"after evaluating shard 1/8 (+{(int(shard[1]) - int(shard[0])) / 1024:.0f} MB); the command "
      f"on shard 1/8, 1 thread: {int(cmd_rss) / 1024:.0f} MB")
ray.shutdown()
