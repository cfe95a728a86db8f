#!/usr/bin/env python3
"""Long differential fuzzing runs: random programs on embedded, cpu and gpu against NumPy.

    PYTHONPATH=src python3 scripts/fuzz.py --backends embedded,cpu,gpu --programs 5000 --jobs 8

Backends: embedded (NumPy arrays), embedded-cupy (CuPy arrays), cpu, gpu.

Needs only NumPy (and CuPy for gpu), not Hypothesis: programs are drawn from a seeded NumPy
generator (program ``i`` uses seed ``--seed + i``), the same model as tests/test_fuzz.py.
Programs run in worker processes, so a crash (a segfault) is recorded against its program
and the run goes on. Each failure is shrunk (``--shrink-budget`` trials) and saved under
``--save`` as a JSON file that tests/test_fuzz.py replays as a regression test (copy it to
tests/fuzz/regressions/). Exit status 1 if anything failed; the summary is printed and written
to ``--json``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def features(p: object, source: str) -> list[str]:
    """What a program exercises, for the coverage table of the summary."""
    found = [p.kind, p.dtype]  # type: ignore[attr-defined]
    marks = {
        "scan": "@gtx.scan_operator",
        "tuple-carry": "init=(",
        "backward-scan": "forward=False",
        "concat_where": "concat_where",
        "where": "gtx.where",
        "neighbor_sum": "neighbor_sum",
        "max/min_over": "_over(",
        "E2C[i]": "(E2C[",
        "tuple-out": "out=(",
        "domain=": "domain=",
        "shift": " + 1)",
        "tuple-local": "[0]",
    }
    found += [k for k, m in marks.items() if m in source]
    layouts = {f.layout for f in p.fields}  # type: ignore[attr-defined]
    found += [f"layout:{x}" for x in sorted(layouts)]
    if any(o in st.args for st in p.statements for o in st.outs):  # type: ignore[attr-defined]
        found.append("in-place")
    if len(p.statements) > 1:  # type: ignore[attr-defined]
        found.append("multi-statement")
    return found


def worker(args: argparse.Namespace) -> None:
    from fuzz.choices import RandomChooser, Replay
    from fuzz.execute import check
    from fuzz.programs import draw_program
    from fuzz.shrink import fails_like, shrink
    from fuzz.source import render

    backends = args.backends.split(",")
    for i in range(args.worker, args.programs, args.jobs):
        seed = args.seed + i
        if seed < args.resume_from:
            continue
        print(json.dumps({"start": seed}), flush=True)
        ch = RandomChooser(seed)
        p = draw_program(ch, args.max_statements)
        source = render(p)
        t = time.perf_counter()
        o = check(p, backends, args.rounds)
        record = {
            "seed": seed,
            "status": o.status,
            "backend": o.backend,
            "seconds": round(time.perf_counter() - t, 3),
            "features": features(p, source),
        }
        if not o.ok:
            record["message"] = o.message[-3000:]
            values = (
                shrink(
                    ch.record,
                    fails_like(o, [o.backend] if o.backend in backends else backends, args.rounds),
                    args.shrink_budget,
                )
                if args.shrink_budget
                else ch.record
            )
            small = draw_program(Replay(values))
            record["shrunk"] = {"choices": values, "program": repr(small), "source": render(small)}
            small_o = check(small, [o.backend] if o.backend in backends else backends, args.rounds)
            record["shrunk"]["message"] = small_o.message[-3000:]
            if args.save:
                path = Path(args.save) / f"{o.status}-{o.backend}-seed{seed}.json"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(
                    json.dumps(
                        {
                            "seed": seed,
                            "status": o.status,
                            "backend": o.backend,
                            "choices": values,
                            "program": repr(small),
                            "source": record["shrunk"]["source"],
                            "message": record["shrunk"]["message"],
                        },
                        indent=1,
                    )
                )
        print(json.dumps(record), flush=True)
        del source


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--backends", default="embedded,cpu")
    ap.add_argument("--programs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=2, help="calls per program, each on fresh data")
    ap.add_argument("--max-statements", type=int, default=4)
    ap.add_argument("--shrink-budget", type=int, default=150)
    ap.add_argument("--save", default="fuzz-failures", help="folder for shrunk failures (JSON)")
    ap.add_argument("--json", default=None, help="write the summary and every failure here")
    ap.add_argument("--log", default=None, help="append every program's record here (JSON lines)")
    ap.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--resume-from", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is not None:
        worker(args)
        return 0
    return supervise(args)


def supervise(args: argparse.Namespace) -> int:
    """Run the workers; restart one that died (a crash) after the program it died on."""
    t0 = time.time()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    base = [
        sys.executable,
        __file__,
        "--backends",
        args.backends,
        "--programs",
        str(args.programs),
        "--seed",
        str(args.seed),
        "--jobs",
        str(args.jobs),
        "--rounds",
        str(args.rounds),
        "--max-statements",
        str(args.max_statements),
        "--shrink-budget",
        str(args.shrink_budget),
        "--save",
        args.save,
    ]
    records: list[dict] = []
    lock = threading.Lock()
    log = open(args.log, "a") if args.log else None

    def keep(rec: dict, line: str) -> None:
        with lock:
            records.append(rec)
            if log:
                log.write(line if line.endswith("\n") else line + "\n")
                log.flush()
            if len(records) % 100 == 0:
                bad = sum(r["status"] != "ok" for r in records)
                print(
                    f"[{time.time() - t0:7.0f}s] {len(records)} programs, {bad} failures",
                    flush=True,
                )

    def run_worker(w: int) -> None:
        resume = 0
        while True:
            proc = subprocess.Popen(
                [*base, "--worker", str(w), "--resume-from", str(resume)],
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            started = None
            assert proc.stdout is not None
            for line in proc.stdout:
                rec = json.loads(line)
                if "start" in rec:
                    started = rec["start"]
                else:
                    started = None
                    keep(rec, line)
            code = proc.wait()
            if started is None:
                return
            keep(
                {
                    "seed": started,
                    "status": "crash",
                    "backend": args.backends,
                    "features": [],
                    "message": f"worker exited with {code} (signal {-code if code < 0 else 'none'})",
                },
                json.dumps({"seed": started, "status": "crash"}),
            )
            resume = started + 1

    threads = [threading.Thread(target=run_worker, args=(w,)) for w in range(args.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return report(args, records, time.time() - t0)


def report(args: argparse.Namespace, records: list[dict], seconds: float) -> int:
    status = collections.Counter(r["status"] for r in records)
    feats = collections.Counter(f for r in records for f in r.get("features", []))
    failures = [r for r in records if r["status"] != "ok"]
    summary = {
        "backends": args.backends.split(","),
        "programs": len(records),
        "seed": args.seed,
        "status": dict(status),
        "seconds": round(seconds, 1),
        "features": dict(feats.most_common()),
        "failures": failures,
    }
    print(f"\n{len(records)} programs on {args.backends} in {seconds:.0f} s: {dict(status)}")
    print("features: " + ", ".join(f"{k} {v}" for k, v in feats.most_common()))
    for r in failures:
        print(
            f"\n--- seed {r['seed']}: {r['status']} on {r['backend']}\n{r.get('message', '')[-1500:]}"
        )
        if "shrunk" in r:
            print(f"shrunk program:\n{r['shrunk']['source']}")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
