# SPDX-License-Identifier: GPL-2.0
"""The instruction breakdown of a `make bench --loopback --profile` run.

tests/bench/guest.sh --profile runs some cases once more under perf's
sampling of the whole system (cpu-clock, a hrtimer) and lists them in
bench/profile.tsv, with perf report's share of the samples by object and
symbol; tests/bench/run writes symbols.tsv, each function of the kernel's
built-in objects and of rdmx's with the object that defines it. Here each
symbol's share goes to a layer (its module, else its object's directory;
user space programs are one layer), and is taken of the case's CPU time
per operation. Under QEMU -icount with sleep=off a nanosecond of guest
time is a fixed number of instructions (2^shift ns each), so the figures
are instructions per operation; samples in the idle loop are time the CPU
waited. The RDMA device's counters (rdma statistic), taken before and
after each case, give its packets per operation and any loss or
retransmission.
"""

import json
import os
import re

# Module -> layer. Modules not named here are "other kernel".
MODULE_LAYERS = {
    "rdma_rxe": "soft-RoCE (rdma_rxe)",
    "siw": "soft-iWARP (siw)",
    "ib_core": "RDMA core (ib_core, rdma_cm)",
    "rdma_cm": "RDMA core (ib_core, rdma_cm)",
    "ib_cm": "RDMA core (ib_core, rdma_cm)",
    "iw_cm": "RDMA core (ib_core, rdma_cm)",
    "ib_uverbs": "RDMA user verbs (ib_uverbs, rdma_ucm)",
    "rdma_ucm": "RDMA user verbs (ib_uverbs, rdma_ucm)",
    "nvme_rdma": "nvme-rdma host",
    "nvme_fabrics": "nvme-rdma host",
    "nvme_core": "nvme-rdma host",
    "nvme_keyring": "nvme-rdma host",
    "nvmet": "nvmet target",
    "nvmet_rdma": "nvmet target",
    "null_blk": "backing device (null_blk)",
    "rds": "RDS",
    "rds_rdma": "RDS",
    "crc32_generic": "checksums (crc32: soft-RoCE's ICRC)",
    "crc32_pclmul": "checksums (crc32: soft-RoCE's ICRC)",
}

# perf's name for the kernel image: [kernel.kallsyms] when it reads
# /proc/kallsyms, [kernel.vmlinux] when it finds the vmlinux (a guest of
# the perf kernel, whose build tree is there).
KERNEL_DSOS = {"[kernel.kallsyms]", "[kernel.vmlinux]"}

# rdmx's objects -> layer (the first matching prefix).
RDMX_LAYERS = [
    ("kmod/blk/blk_clt", "rdmx block client"),
    ("kmod/blk/disk_sysfs", "rdmx block client"),
    ("kmod/blk/", "rdmx block server"),
    ("kmod/msg/", "rdmx messages"),
    ("kmod/", "rdmx core"),
]

# Built-in objects -> layer (the first matching prefix).
BUILTIN_LAYERS = [
    ("block/", "block layer"),
    ("fs/", "system calls, VFS, aio"),
    ("io_uring/", "system calls, VFS, aio"),
    ("arch/x86/entry/", "system calls, VFS, aio"),
    ("kernel/entry/", "system calls, VFS, aio"),
    ("crypto/", "checksums (crc32: soft-RoCE's ICRC)"),
    ("lib/crc", "checksums (crc32: soft-RoCE's ICRC)"),
    ("arch/x86/crypto/", "checksums (crc32: soft-RoCE's ICRC)"),
    ("arch/x86/lib/crc", "checksums (crc32: soft-RoCE's ICRC)"),
    ("net/", "network stack"),
    ("drivers/net/", "network stack"),
    ("mm/", "memory management"),
    ("kernel/sched/", "scheduler"),
    ("kernel/irq/", "interrupts, softirqs, timers"),
    ("kernel/softirq", "interrupts, softirqs, timers"),
    ("kernel/time/", "interrupts, softirqs, timers"),
    ("arch/x86/kernel/apic/", "interrupts, softirqs, timers"),
    ("kernel/workqueue", "scheduler"),
    ("kernel/locking/", "locking"),
]

IDLE = {"default_idle", "arch_cpu_idle", "default_idle_call", "do_idle", "cpu_startup_entry",
        "cpuidle_idle_call", "mwait_idle", "cpu_idle_poll", "pv_native_safe_halt"}

USER = "user space (fio, qperf, perftest, rdmxctl, perf)"
OTHER = "other kernel"
IDLE_LAYER = "idle"

# The order of the rows: a request's way down and back.
ORDER = [USER, "system calls, VFS, aio", "block layer", "rdmx block client",
         "nvme-rdma host", "rdmx messages", "RDS", "rdmx core",
         "RDMA user verbs (ib_uverbs, rdma_ucm)", "RDMA core (ib_core, rdma_cm)",
         "soft-RoCE (rdma_rxe)", "soft-iWARP (siw)", "checksums (crc32: soft-RoCE's ICRC)",
         "network stack", "rdmx block server", "nvmet target", "backing device (null_blk)",
         "memory management", "scheduler", "interrupts, softirqs, timers", "locking",
         OTHER, IDLE_LAYER]

# The cases, in the order of the table: (case id, column label).
CASES = [
    ("block/rdmx/randread-4k-qd1", "rdmx randread QD1"),
    ("block/nvme-rdma/randread-4k-qd1", "nvme-rdma randread QD1"),
    ("block/local/randread-4k-qd1", "null_blk randread QD1"),
    ("block/rdmx/randwrite-4k-qd1", "rdmx randwrite QD1"),
    ("block/nvme-rdma/randwrite-4k-qd1", "nvme-rdma randwrite QD1"),
    ("block/local/randwrite-4k-qd1", "null_blk randwrite QD1"),
    ("block/rdmx/randread-4k-qd32", "rdmx randread QD32"),
    ("block/nvme-rdma/randread-4k-qd32", "nvme-rdma randread QD32"),
    ("block/local/randread-4k-qd32", "null_blk randread QD32"),
    ("block/rdmx/randwrite-4k-qd32", "rdmx randwrite QD32"),
    ("block/nvme-rdma/randwrite-4k-qd32", "nvme-rdma randwrite QD32"),
    ("block/local/randwrite-4k-qd32", "null_blk randwrite QD32"),
    ("block/rdmx/read-128k", "rdmx 128 KiB read"),
    ("block/nvme-rdma/read-128k", "nvme-rdma 128 KiB read"),
    ("block/local/read-128k", "null_blk 128 KiB read"),
    ("block/rdmx/write-128k", "rdmx 128 KiB write"),
    ("block/nvme-rdma/write-128k", "nvme-rdma 128 KiB write"),
    ("block/local/write-128k", "null_blk 128 KiB write"),
    ("msg/rdmx-ping-64", "rdmx ping 64 B"),
    ("msg/qperf-rds_lat", "RDS rds_lat 64 B"),
    ("raw/ib_send_lat-64", "ib_send_lat 64 B"),
    ("msg/rdmx-bench-send-bw-4m", "rdmx 4 MiB messages, per KiB"),
    ("msg/qperf-rds_bw", "RDS rds_bw 1 MiB, per KiB"),
    ("rma/rdmx-bench-fadd-lat-8", "rdmx fetch-and-add 8 B"),
    ("raw/ib_atomic_lat-8", "ib_atomic_lat 8 B"),
]

# Fewer round trips than this and a message program's start and connection
# weigh on each too much (fio's I/Os are counted from the start of the job).
MIN_OPS = 1000

# perf report --stdio -q --sort dso,sym, with -n --show-total-period (the
# samples and their period, ns of cpu-clock) or without.
STAT_LINE = re.compile(r"^\s*([\d.]+)%\s+(?:\d+\s+\d+\s+)?(\S+)\s+\[([k.])\]\s+(\S+)")
PERIOD_LINE = re.compile(r"^\s*[\d.]+%\s+\d+\s+(\d+)\s")


def parse_stat(text):
    """perf report's lines: [(share %, dso, kernel?, symbol)] and the sum of
    the samples' periods, of every line (ns sampled; None when the report
    has no periods)."""
    out, period = [], None
    for line in text.splitlines():
        m = PERIOD_LINE.match(line)
        if m:
            period = (period or 0) + int(m.group(1))
        m = STAT_LINE.match(line)
        if m:
            out.append((float(m.group(1)), m.group(2), m.group(3) == "k", m.group(4)))
    return out, period


# rdma statistic's counters (rxe's names) shown per operation: counter, row.
PACKET_COUNTERS = [
    ("sent_pkts", "packets sent per operation"),
    ("rcvd_pkts", "packets received per operation"),
    ("rdma_sends", "SEND messages per operation"),
]
# Those that count a loss, a retransmission or a wait for a timer: NAKs
# for a receive not posted (RNR) and for a packet out of sequence, the
# requests the responder saw twice or out of order, the requester's
# retries and their running out, packets the device failed to send, the
# link going down. Not ack_deferred, every response a requester queues.
ERROR_COUNTERS = ["rcvd_rnr_err", "send_rnr_err", "rcvd_seq_err", "out_of_seq_request",
                  "duplicate_request", "completer_retry_err", "retry_exceeded_err",
                  "retry_rnr_exceeded_err", "send_err", "link_downed"]
COUNTERS_LINE = re.compile(r"^link\s+\S+(.*)", re.M | re.S)


def parse_counters(text):
    """rdma statistic show link DEV/PORT: {counter: value}, from its line
    "link rxe0/1 sent_pkts 399530 rcvd_pkts 399530 ..." (words not in a
    name-number pair, such as "optional-counters", are skipped)."""
    m = COUNTERS_LINE.search(text)
    if not m:
        raise ValueError("no link line")
    words = m.group(1).split()
    out, i = {}, 0
    while i + 1 < len(words):
        if words[i + 1].isdigit():
            out[words[i]] = int(words[i + 1])
            i += 2
        else:
            i += 1
    if not out:
        raise ValueError("no counters on the link line")
    return out


def load_counters(prefix):
    """How much each counter of the device grew over a profiled case:
    {counter: after - before}, from PREFIX.counters-before and -after.
    OSError when one is missing, ValueError when one does not parse or a
    counter went back (the device made again)."""
    vals = []
    for when in ("before", "after"):
        with open("%s.counters-%s" % (prefix, when), errors="replace") as f:
            vals.append(parse_counters(f.read()))
    before, after = vals
    delta = {k: v - before[k] for k, v in after.items() if k in before}
    if any(v < 0 for v in delta.values()):
        raise ValueError("a counter went back")
    return delta


def parse_ops(kind, text):
    """The operations a profiled case did, from its output."""
    if kind == "fio":
        j = json.loads(text[text.index("{"):])
        job = j["jobs"][0]
        return job["read"]["total_ios"] + job["write"]["total_ios"]
    if kind in ("ping", "perftest-lat"):
        # perftest's columns: #bytes, #iterations, then the times.
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if line.split()[:2] == ["#bytes", "#iterations"]:
                for nxt in lines[i + 1:]:
                    vals = nxt.split()
                    if len(vals) > 2 and vals[0].isdigit() and vals[1].isdigit():
                        return int(vals[1])
        raise ValueError("no #iterations column")
    if kind == "qperf":
        m = re.search(r"loc_recv_msgs\s*=\s*([\d,]+)", text)
        if m:
            return int(m.group(1).replace(",", ""))
        raise ValueError("no loc_recv_msgs (qperf -vvs)")
    if kind == "perftest-bw":
        # KiB moved: #bytes times #iterations.
        for line in text.splitlines():
            vals = line.split()
            if len(vals) > 2 and vals[0].isdigit() and vals[1].isdigit():
                return int(vals[0]) * int(vals[1]) // 1024
        raise ValueError("no #bytes and #iterations line")
    if kind == "qperf-bw":
        # KiB moved: the bytes received, "recv_bytes = 178 MiB (186,646,528)".
        m = re.search(r"recv_bytes\s*=[^(\n]*\(([\d,]+)\)", text)
        if m:
            return int(m.group(1).replace(",", "")) // 1024
        raise ValueError("no recv_bytes (qperf -vvs)")
    raise ValueError("unknown kind %s" % kind)


def base_name(fn):
    """A compiler-made clone's name (foo.isra.0, foo.cold) is its origin's."""
    return fn.split(".", 1)[0]


def object_of(sym, syms):
    """The object defining @sym: nm names a clone as perf does
    (finish_task_switch.isra.0), so its own name first, then its origin's."""
    return syms.get(sym) or syms.get(base_name(sym), "")


def load_symbols(rundir):
    """symbols.tsv: {function: object path}; the first definition wins."""
    syms = {}
    try:
        with open(os.path.join(rundir, "symbols.tsv")) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 2:
                    syms.setdefault(parts[0], parts[1])
    except OSError:
        pass
    return syms


def prefix_layer(path, table):
    for prefix, layer in table:
        if path.startswith(prefix):
            return layer
    return None


def layer_of(dso, kernel, sym, syms):
    """The layer of a sample in @sym of @dso (perf's names: KERNEL_DSOS,
    [MODULE], a program or library); @kernel: perf's [k] mark."""
    name = base_name(sym)
    if not kernel:
        return USER
    if dso in KERNEL_DSOS:
        if name in IDLE:
            return IDLE_LAYER
        path = object_of(sym, syms)
        if path.startswith("kmod/"):
            return OTHER  # an rdmx name in vmlinux: another function of the name
        return prefix_layer(path, BUILTIN_LAYERS) or OTHER
    mod = dso.strip("[]").replace("-", "_")
    if mod == "rdmx":
        return prefix_layer(object_of(sym, syms), RDMX_LAYERS) or "rdmx core"
    return MODULE_LAYERS.get(mod, OTHER)


def ns_per_instruction(meta):
    """2^shift ns per instruction under -icount (None without it)."""
    m = re.search(r"shift=(\d+)", meta.get("icount") or "")
    return float(1 << int(m.group(1))) if m else None


def node_rows(rundir, name, width):
    """(node directory, fields) of each line of WIDTH tab-separated fields
    in every guest's bench/NAME (the harness's manifests)."""
    vm = os.path.join(rundir, "vm")
    nodes = sorted(d for d in os.listdir(vm) if d.startswith("node")) if os.path.isdir(vm) else []
    for node in nodes:
        path = os.path.join(vm, node, "bench", name)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == width:
                    yield os.path.join(vm, node), parts


def load_profiles(rundir):
    """Each profiled case: {case: {"layers": {layer: ns/op}, "ops",
    "counters": {counter: growth} or None, ...}} and the reasons of those
    that could not be read."""
    syms = load_symbols(rundir)
    out, why = {}, {}
    for base, parts in node_rows(rundir, "profile.tsv", 6):
        cid, kind, rc, ns, cpus, ref = parts
        if kind == "none":
            why["*"] = ref
            continue
        prefix = ref.replace("/rdmx/out/", base + "/", 1)
        try:
            with open(prefix + ".out", errors="replace") as rf:
                text = rf.read()
            if rc != "0":
                raise ValueError("exit status %s" % rc)
            ops = parse_ops(kind, text)
            with open(prefix + ".stat", errors="replace") as sf:
                stat, period = parse_stat(sf.read())
        except (OSError, ValueError, KeyError, IndexError) as e:
            why[cid] = str(e)
            continue
        few = ops < (1 if kind == "fio" else MIN_OPS)
        if few or not stat:
            why[cid] = ("only %d round trips: the program's start would weigh "
                        "on each" % ops if few else "no samples")
            continue
        # The time sampled, over every CPU: the samples' periods, or else
        # the command's wall time (which also holds perf's own start and
        # end) times the CPUs.
        total = (period if period else float(ns) * int(cpus)) / ops
        share = sum(p for p, _, _, _ in stat)
        layers = {}
        for pct, dso, kernel, sym in stat:
            lay = layer_of(dso, kernel, sym, syms)
            layers[lay] = layers.get(lay, 0.0) + total * pct / share
        try:
            counters = load_counters(prefix)
        except (OSError, ValueError):
            counters = None  # not taken (siw, an older run) or not readable: no rows
        out[cid] = {"layers": layers, "ops": ops, "total": total,
                    "symbols": len(stat), "counters": counters}
    return out, why


def fmt_count(v):
    if v >= 100:
        return "{:,.0f}".format(v)
    return "%.1f" % v


def breakdown_section(rundir, meta, js):
    """The report's section, [] when the run profiled nothing."""
    profiles, why = load_profiles(rundir)
    if not profiles and not why:
        return []
    unit = ns_per_instruction(meta)
    scale = 1.0 / unit if unit else 1.0
    what = "instructions" if unit else "ns (no -icount: time, not instructions)"
    doc = [("h", "Where the instructions go (perf sampling)")]
    if "*" in why:
        doc.append(("p", "n/a: %s." % why["*"]))
        return doc
    cols = [(cid, label) for cid, label in CASES if cid in profiles]
    if not cols:
        return doc + [("p", "n/a: %s: %s." % (cid, reason)) for cid, reason in sorted(why.items())]
    layers = [lay for lay in ORDER
              if any(profiles[c]["layers"].get(lay, 0) > 0 for c, _ in cols)]
    rows = []
    for lay in layers:
        cells = []
        for cid, _ in cols:
            p = profiles[cid]
            v = p["layers"].get(lay, 0.0)
            cells.append("%s (%.0f %%)" % (fmt_count(v * scale), 100.0 * v / p["total"])
                         if v > 0 else "-")
        rows.append([lay] + cells)
    rows.append(["total"] + [fmt_count(profiles[c]["total"] * scale) for c, _ in cols])
    rows.append(["operations profiled"] + [str(profiles[c]["ops"]) for c, _ in cols])
    crows = counter_rows([profiles[c] for c, _ in cols])
    doc.append(("p", "%s per operation by layer: each case run once more under perf's "
                "sampling of the whole system (cpu-clock, %s), the case's CPU time per "
                "operation shared out as its samples fell (in loopback one kernel runs "
                "both sides). Idle is time the CPU waited. perf's own cost is in user "
                "space and in the timer interrupts.%s" % (
                    what, "250 a second", COUNTERS_NOTE if crows else "")))
    doc.append(("table", ["layer"] + [label for _, label in cols], rows + crows))
    js["breakdown"] = {cid: dict(profiles[cid], unit=what,
                                 layers={k: v * scale for k, v in profiles[cid]["layers"].items()},
                                 total=profiles[cid]["total"] * scale,
                                 counters_per_op=per_op(profiles[cid]),
                                 counters_flagged=flagged(profiles[cid]))
                       for cid, _ in cols}
    limit = limit_rows(profiles, scale)
    if limit:
        doc.append(("p", "The floor under a 4 KiB I/O: null_blk's own cost (fio on the "
                    "device itself) plus the kernel's part of one 64 B round trip of the raw "
                    "transport (ib_send_lat: a SEND each way, the fewest work requests a "
                    "design could use; its user space is left out, as perftest busy-polls), "
                    "in %s per operation:" % what))
        doc.append(("table", ["job", "null_blk", "+ ib_send_lat round trip", "floor",
                              "rdmx", "nvme-rdma"], limit))
    for cid, reason in sorted(why.items()):
        doc.append(("p", "n/a: %s: %s." % (cid, reason)))
    return doc


COUNTERS_NOTE = (" Below them, the RDMA device's counters (rdma statistic) before and after "
                 "the same run, per operation (in loopback the one device sends and "
                 "receives every packet); a counter of loss or retransmission (RNR NAKs, "
                 "sequence errors, duplicates, retries, send errors) that moved is in bold, "
                 "with its count.")


def per_op(p):
    """{counter: growth per operation} of a profile, None without counters."""
    c = p.get("counters")
    return None if c is None else {k: float(v) / p["ops"] for k, v in c.items()}


def flagged(p):
    """The error counters that moved over a profile: [(counter, growth)]."""
    c = p.get("counters") or {}
    return [(k, c[k]) for k in ERROR_COUNTERS if c.get(k)]


def counter_rows(profs):
    """The table's rows of the device's counters, a cell a profile ("-"
    where it has none); [] when no profile has them."""
    if not any(p.get("counters") is not None for p in profs):
        return []
    rows = []
    for name, label in PACKET_COUNTERS:
        if any(name in (p.get("counters") or {}) for p in profs):
            rows.append([label] + [fmt_count(per_op(p)[name])
                                   if name in (p.get("counters") or {}) else "-"
                                   for p in profs])
    cells = []
    for p in profs:
        if p.get("counters") is None:
            cells.append("-")
            continue
        bad = ["%s %d (%.2g per operation)" % (k, v, float(v) / p["ops"])
               for k, v in flagged(p)]
        cells.append("**%s**" % ", ".join(bad) if bad else "none")
    rows.append(["loss, retransmission (device counters)"] + cells)
    return rows


def limit_rows(profiles, scale):
    raw = profiles.get("raw/ib_send_lat-64")
    if not raw:
        return []
    # The kernel's part: in loopback perftest's two processes busy-poll,
    # so its user space time is mostly each waiting for the other.
    rt = raw["total"] - raw["layers"].get(USER, 0.0) - raw["layers"].get(IDLE_LAYER, 0.0)
    rows = []
    for job in ("randread-4k-qd1", "randwrite-4k-qd1", "randread-4k-qd32", "randwrite-4k-qd32"):
        local = profiles.get("block/local/" + job)
        if not local:
            continue
        cells = [job, fmt_count(local["total"] * scale), fmt_count(rt * scale),
                 fmt_count((local["total"] + rt) * scale)]
        for c in ("rdmx", "nvme-rdma"):
            p = profiles.get("block/%s/%s" % (c, job))
            cells.append(fmt_count(p["total"] * scale) if p else "-")
        rows.append(cells)
    return rows
