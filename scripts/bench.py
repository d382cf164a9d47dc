#!/usr/bin/env python3
"""The body of scripts/bench.sh: runs the benchmarks it names and rewrites
their sections of docs/src/reference/benchmarks.md.

    python3 scripts/bench.py THREADS "B:T ..." [players] [evaluate] [export] [serve] [tests]

with SOLVE2048 (the binary), BENCH_ROOT (an empty scratch folder) and
BENCH_BUILD (the build's name) in the environment; BENCH_PAGE names another
page to rewrite (a copy, to try the script). Each section of the page
lies between <!-- bench:NAME --> and <!-- /bench:NAME -->; a table's rows
are keyed by their first cells, so a run replaces the rows it measured and
keeps the others.
"""
import datetime
import json
import os
import socket
import subprocess
import sys
import time

PAGE = os.environ.get("BENCH_PAGE", "docs/src/reference/benchmarks.md")
BIN = os.environ["SOLVE2048"]
ROOT = os.environ["BENCH_ROOT"]
BUILD = os.environ["BENCH_BUILD"]
NETWORK = "players/networks/3x3-pentomino.weights"


def machine():
    """This machine in a few words: cores, processor, memory."""
    model = "unknown processor"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        kib = int(f.readline().split()[1])
    return f"{os.cpu_count()} cores, {model}, {kib / 2**20:.0f} GiB"


MACHINE = machine()
DATE = datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def run(args, stdout=subprocess.PIPE):
    """Run `args`; its stdout, wall seconds, core seconds and peak RSS."""
    start = time.monotonic()
    p = subprocess.Popen(args, stdout=stdout)
    out = p.stdout.read() if stdout == subprocess.PIPE else b""
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)} failed with status {p.returncode}")
    wall = time.monotonic() - start
    return out.decode(), wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024


def here():
    """The machine and its load average before a measurement: other work on
    it slows every figure down."""
    return f"{MACHINE}, load {os.getloadavg()[0]:.1f}"


def name(board, target):
    """A game's name as the page writes it: 3x3 to 1024, 2x3 to 64."""
    shape = f"{board}x{board}" if board.isdigit() else board
    return f"{shape} to {target}"


SOLVED = {}


def solve(board, target, threads):
    """Solve a game on a fresh store (once a run); its store and facts."""
    if (board, target) in SOLVED:
        return SOLVED[(board, target)]
    store = os.path.join(ROOT, f"{board}-{target}")
    args = ["solve", "--board", board, "--target", target, "--threads", threads]
    out, wall, core, rss = run([BIN, *args, "--store", store, "--json"])
    facts = {"json": json.loads(out), "wall": wall, "core": core, "rss": rss,
             "command": "solve2048 " + " ".join(args), "store": store}
    SOLVED[(board, target)] = facts
    return facts


def cells(row):
    """The cells of a Markdown table row."""
    return [c.strip() for c in row.strip().strip("|").split("|")]


def row(*values):
    """A Markdown table row."""
    return "| " + " | ".join(str(v) for v in values) + " |"


def section(page, key):
    """The page cut around section `key`: before, body, after."""
    begin, end = f"<!-- bench:{key} -->\n", f"<!-- /bench:{key} -->"
    i = page.index(begin) + len(begin)
    j = page.index(end, i)
    return page[:i], page[i:j], page[j:]


def set_body(page, key, body):
    """The page with section `key` replaced by `body`."""
    before, _, after = section(page, key)
    return before + body.rstrip("\n") + "\n" + after


def set_rows(page, key, rows, width):
    """The page with the rows of section `key`'s table whose first `width`
    cells match a new row's replaced by it; the others are kept."""
    before, body, after = section(page, key)
    lines = body.rstrip("\n").split("\n")
    head, old = lines[:2], lines[2:]
    new = {tuple(cells(r)[:width]): r for r in rows}
    kept = [r for r in old if tuple(cells(r)[:width]) not in new]
    return before + "\n".join(head + kept + rows) + "\n" + after


def gib(b):
    return f"{b / 2**30:.2f} GiB"


def bench_solves(page, threads, games):
    """Solve each game; its row, its requests' rows and its verify row."""
    solves, requests, verifies = [], [], []
    for g in games:
        board, target = g.split(":")
        load = here()
        f = solve(board, target, threads)
        d, game = f["json"], name(board, target)
        solves.append(row(
            game, f"{d['states']:,}", d["start_value"], f"`{d['digest']}`",
            f"`{f['command']}`", f"{f['wall']:.1f} ({d['enumerate_seconds']:.1f} + "
            f"{d['solve_seconds']:.1f})", f"{f['core']:.1f}",
            f"{1e6 * f['core'] / d['states']:.2f}", gib(f["rss"]), load, BUILD, DATE))
        chunks = sum(p["chunks"] for p in d["parts"])
        for phase, key in (("forward", "enumerate"), ("backward", "solve")):
            r = d["store_requests"][key]["requests"]
            total = sum(r.values())
            requests.append(row(
                game, phase, chunks, *(r.get(op, 0) for op in ("get", "put", "list", "delete", "head")),
                f"{total:,}", f"{total / d['states']:.1e}", f"{total / chunks:.1f}", BUILD, DATE))
        load = here()
        _, wall, _, _ = run([BIN, "verify", "--store", f["store"]], stdout=subprocess.DEVNULL)
        objects, size = 0, 0
        for folder, _, files in os.walk(f["store"]):
            objects += len(files)
            size += sum(os.path.getsize(os.path.join(folder, n)) for n in files)
        verifies.append(row(
            game, f"{objects:,}", f"{size / 2**20:.1f} MiB", f"{wall:.1f}",
            f"{size / 2**20 / wall:.1f}", "`solve2048 verify --store DIR`", load, BUILD, DATE))
    page = set_rows(page, "solves", solves, 1)
    page = set_rows(page, "requests", requests, 2)
    return set_rows(page, "verify", verifies, 1)


def bench_evaluate(page, threads):
    """Evaluate players exactly on 3x3 to 512 and 1024."""
    rows = []
    for target in ("512", "1024"):
        store = solve("3", target, threads)["store"]
        for player in ("random", "greedy", "expectimax:2", f"ntuple:{NETWORK}", "optimal"):
            out_dir = os.path.join(ROOT, f"eval-{target}-{len(rows)}")
            args = ["evaluate", "--store", "DIR", "--player", player, "--threads", threads]
            load = here()
            out, wall, core, rss = run([BIN, *args[:2], store, *args[3:], "--out", out_dir, "--json"])
            d = json.loads(out)
            rows.append(row(name("3", target), f"`{player}`", f"{d['value']:.6g}", f"{wall:.0f}",
                            f"{core:.0f}", gib(rss), f"`solve2048 {' '.join(args)}`", load, BUILD, DATE))
    return set_rows(page, "evaluate", rows, 2)


def bench_export(page, threads):
    """Export 3x3 to 256 to Parquet, without and with each move's value."""
    store = solve("3", "256", threads)["store"]
    rows = []
    for flags in ([], ["--with-moves"]):
        out_dir = os.path.join(ROOT, f"export{len(rows)}")
        args = ["export", "--store", "DIR", "--format", "parquet", "--out", "OUT", *flags]
        load = here()
        _, wall, _, rss = run([BIN, *args[:2], store, *args[3:6], out_dir, *flags],
                              stdout=subprocess.DEVNULL)
        size = sum(os.path.getsize(os.path.join(out_dir, n)) for n in os.listdir(out_dir))
        rows.append(row("3x3 to 256", " ".join(flags) or "(none)", f"{wall:.1f}",
                        f"{size / 2**20:.1f} MiB", f"{rss / 2**20:.0f} MiB",
                        f"`solve2048 {' '.join(args)}`", load, BUILD, DATE))
    return set_rows(page, "export", rows, 2)


def bench_serve(page, threads):
    """Answer time of GET /api/query under 100 clients, on 3x3 to 1024."""
    store = solve("3", "1024", threads)["store"]
    load = here()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        addr = f"127.0.0.1:{s.getsockname()[1]}"
    server = subprocess.Popen([BIN, "serve", "--store", store, "--rate", "0", "--listen", addr],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(2)
        out = subprocess.run(["target/release/examples/load", addr, "100", "20000"],
                             check=True, capture_output=True, text=True).stdout
    finally:
        server.terminate()
        server.wait()
    body = (f"{load}; {BUILD}; {DATE}:\n\n```\n"
            "solve2048 solve --board 3 --target 1024 --store DIR\n"
            "solve2048 serve --store DIR --rate 0 --listen 127.0.0.1:PORT &\n"
            "target/release/examples/load 127.0.0.1:PORT 100 20000\n"
            + "".join(f"# {line}\n" for line in out.strip().splitlines()) + "```\n")
    return set_body(page, "serve", body)


def bench_players(page):
    """scripts/bench-players.sh's tables."""
    load = here()
    out = subprocess.run(["scripts/bench-players.sh"], check=True, capture_output=True,
                         text=True).stdout
    body = f"`scripts/bench-players.sh` on {load}; {BUILD}; {DATE}:\n\n"
    return set_body(page, "players", body + "\n".join(
        line for line in out.splitlines() if not line.startswith("# ")))


def bench_tests(page):
    """The whole test suite, as CI runs it."""
    load = here()
    start = time.monotonic()
    out = subprocess.run([".ci/run"], capture_output=True, text=True).stdout
    wall = time.monotonic() - start
    total = [line for line in out.splitlines() if line.startswith("tests:")][-1:]
    body = row("`.ci/run`", f"{wall:.0f}", total[0] if total else "(no total line)",
               load, BUILD, DATE)
    before, old, after = section(page, "tests")
    head = old.split("\n")[:2]
    return before + "\n".join(head + [body]) + "\n" + after


def main():
    threads, games, extra = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
    with open(PAGE) as f:
        page = f.read()
    page = bench_solves(page, threads, games)
    if "evaluate" in extra:
        page = bench_evaluate(page, threads)
    if "export" in extra:
        page = bench_export(page, threads)
    if "serve" in extra:
        page = bench_serve(page, threads)
    if "players" in extra:
        page = bench_players(page)
    if "tests" in extra:
        page = bench_tests(page)
    with open(PAGE, "w") as f:
        f.write(page)
    print(f"rewrote {PAGE}")


main()
