"""Loading: which raw files, their headers, and their records checked against the records
contract (every field a record of its bench must have, with its type). A record is read by
its fields only; its label is a caption and never parsed. A record that breaks the
contract stops the report with the file, the line and what is missing."""

import hashlib
import json
import os
import re
import sys

# The quantiles of every latency histogram, as the harnesses write them.
PCTS = ["p50", "p90", "p99", "p99.9", "p99.99", "max", "count"]

INT, NUMBER, STR, BOOL = (int,), (int, float), (str,), (bool,)
NULL = (type(None),)
# Fields every record has, and those of each bench (None: any JSON object or list, checked
# below for the histograms).
COMMON = {"bench": STR, "system": STR, "round": INT}
THROUGHPUT = {
    "label": STR,
    "kind": STR + NULL,
    "publishers": INT,
    "subscribers": INT,
    "ring_bytes": INT + NULL,
    "buffer_messages": INT + NULL,
    "api": STR,
    "batch": INT,
    "message_bytes": INT,
    "messages_per_publisher": INT,
    "published_per_s": NUMBER,
    "delivered_per_s": NUMBER,
    "delivered_bytes_per_s": NUMBER + NULL,
    "refused_fraction": NUMBER,
    "placement": STR,
    "busy_processes": INT,
    "oversubscribed": BOOL,
}
LOSSY = {
    "label": STR,
    "kind": STR,
    "tethered": INT,
    "lossy": STR,
    "ring_bytes": INT,
    "message_bytes": INT,
    "messages_per_publisher": INT,
    "published_per_s": NUMBER,
    "tethered_received_per_s": NUMBER + NULL,
    "lossy_received_per_s": NUMBER + NULL,
    "lossy_missed_fraction": NUMBER + NULL,
    "refused_fraction": NUMBER,
    "placement": STR,
    "busy_processes": INT,
    "oversubscribed": BOOL,
}
PINGPONG = {"cores": (list,), "one_way_ns": (dict,)}
OPENLOOP = {
    "offered_per_s": NUMBER,
    "achieved_per_s": NUMBER,
    "duration_s": NUMBER,
    "warmup_s": NUMBER,
    "refused_fraction": NUMBER,
    "late_fraction": NUMBER,
    "saturated": BOOL,
    "placement": STR,
    "queueing_ns": (dict,),
    "service_ns": (dict,),
    "total_ns": (dict,),
}
WAKE = {
    "label": STR,
    "mechanism": STR,
    "prototype": BOOL,
    "placement": STR,
    "gap_ns": (list,),
    "wake_ns": (dict,),
    "not_slept": INT + NULL,
    "publisher_wakes": INT + NULL,
    "idle_s": NUMBER,
    "idle_cpu_s_per_s": NUMBER,
    "idle_tick_s": NUMBER,
    "idle_runtime_s_per_s": NUMBER,
}
BENCHES = {
    "throughput": THROUGHPUT,
    "size": THROUGHPUT,
    "stress": THROUGHPUT,
    "headline": THROUGHPUT,
    "lossy": LOSSY,
    "pingpong": PINGPONG,
    "openloop": OPENLOOP,
    "wake": WAKE,
}
SYSTEMS = {"salias", "aeron", "iceoryx2", "spsc-floor", "floor", "message-floor", "ring-floor", "write-floor"}
HISTOGRAMS = ("one_way_ns", "queueing_ns", "service_ns", "total_ns", "wake_ns")


def contract_problem(obj):
    """What `obj` lacks to be a record of the contract, or None."""
    bench = obj.get("bench")
    if bench not in BENCHES:
        return f"bench is {bench!r}, not one of {', '.join(BENCHES)}"
    for name, types in {**COMMON, **BENCHES[bench]}.items():
        if name not in obj:
            return f"a {bench} record needs the field {name!r}"
        value = obj[name]
        # JSON true/false are Python bools, which are ints too: only BOOL fields take them.
        if not isinstance(value, types) or (isinstance(value, bool) and types is not BOOL):
            return f"{name!r} is {json.dumps(value)}, not of the type a {bench} record has there"
    if obj["system"] not in SYSTEMS:
        return f"system is {obj['system']!r}, not one of {', '.join(sorted(SYSTEMS))}"
    # The report's figures are of subscribers that look again at once; the batching
    # receive loops are measured beside them for the notes, and a median must not mix them.
    if obj.get("receive") not in (None, "drain"):
        return f"'receive' is {json.dumps(obj['receive'])}: the report takes subscribers that drain (benches/ipc without --only receive); put such runs in the notes"
    if obj.get("subscriber_pauses"):
        return f"'subscriber_pauses' is {json.dumps(obj['subscriber_pauses'])}: the report takes subscribers that poll again at once (the comparison without --subscriber-pauses); put such runs in the notes"
    huge = obj.get("huge_page_bytes")
    if huge is not None and not (isinstance(huge, int) and not isinstance(huge, bool) and huge > 0):
        return f"'huge_page_bytes' is {json.dumps(huge)}, not a huge page size in bytes"
    # Only benches/ipc's throughput runs are told apart by their pages (`IpcKey`); anywhere
    # else such a run would join a normal-page median.
    if huge is not None and (bench != "throughput" or obj["system"] != "salias"):
        return f"'huge_page_bytes' on a {bench} record of {obj['system']}: only salias throughput runs are kept apart by their pages"
    rt = obj.get("realtime")
    if rt is not None and not (isinstance(rt, dict) and isinstance(rt.get("policy"), str) and isinstance(rt.get("priority"), int)):
        return f"'realtime' is {json.dumps(rt)}, not a policy and priority such as {{\"policy\":\"SCHED_FIFO\",\"priority\":50}}"
    batched = obj.get("batched")
    if batched is not None and not (isinstance(batched, dict) and all(isinstance(batched.get(k), NUMBER) for k in ("trips_per_sample", "p50_ns"))):
        return f"'batched' is {json.dumps(batched)}, not samples of round trips with 'trips_per_sample' and 'p50_ns'"
    state = obj.get("state")
    if state is not None and not (isinstance(state, dict) and all(isinstance(state.get(k), NUMBER) and state[k] > 0 for k in ("before_ns", "after_ns"))):
        return f"'state' is {json.dumps(state)}, not a speed-state probe with positive 'before_ns' and 'after_ns'"
    for name in HISTOGRAMS:
        if name in obj:
            missing = [p for p in PCTS if not isinstance(obj[name].get(p), NUMBER)]
            if missing:
                return f"{name!r} lacks the quantiles {', '.join(missing)}"
    return None


def read_jsonl(path):
    header, records = None, []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{number}: not JSON: {e}")
            if "bench" in obj:
                problem = contract_problem(obj)
                if problem:
                    sys.exit(
                        f"{path}:{number}: {problem}. Records are read by their fields (the raw-data "
                        "records contract: support's records module), never by their labels; data "
                        "written before the contract need their fields added."
                    )
                records.append(obj)
            elif header is None:
                header = obj
    return header or {}, records


def kind_of(path, header, records=()):
    """'comparison', 'ipc' or 'wake' (a file of wake-up records only, from benches/wake or
    the comparison's `--only wake`)."""
    name = os.path.basename(path)
    if records and all(r["bench"] == "wake" for r in records):
        return "wake"
    if name.startswith("ipc-"):
        return "ipc"
    if name.startswith("comparison-"):
        return "comparison"
    return "comparison" if "versions" in header or "config" in header else "ipc"


def stamp_of(path):
    """The unix time in a raw file's name, then its mtime: which file of a kind is newest."""
    m = re.search(r"(\d{9,})", os.path.basename(path))
    return (int(m.group(1)) if m else 0, os.path.getmtime(path))


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


class Source:
    """One raw file: its path, header, records, which harness wrote it, and its hash."""

    def __init__(self, path):
        self.path = path
        self.header, self.records = read_jsonl(path)
        self.kind = kind_of(path, self.header, self.records)
        self.sha = sha256(path)


def wake_harness(source):
    """Which harness wrote a wake file: the comparison crate records the versions it ran."""
    return "comparison" if "versions" in source.header else "benches/wake"


def newest_wake(sources):
    """The newest wake file of each harness, comparison first."""
    by_harness = {}
    for s in sources:
        by_harness.setdefault(wake_harness(s), []).append(s)
    return [max(by_harness[h], key=lambda s: stamp_of(s.path)) for h in ("comparison", "benches/wake") if h in by_harness]


def load_sources(data_dir):
    """The manifest (or {}) and the sources by kind: those the manifest names, else the
    newest file of each kind. Wake files the manifest does not list (it predates them) are
    the newest of each harness in the directory."""
    manifest_path = os.path.join(data_dir, "manifest.json")
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path, encoding="utf-8") as f:
            manifest = json.load(f)
    sources = {"comparison": [], "ipc": [], "wake": []}
    listed = [(k, n) for k in ("comparison", "ipc", "wake") for n in manifest.get(k, [])]
    if listed:
        for kind, name in listed:
            path = os.path.join(data_dir, name)
            if not os.path.exists(path):
                sys.exit(f"manifest.json names {name}, which is not in {data_dir}")
            source = Source(path)
            sources[kind].append(source)
    if not listed or "wake" not in manifest:
        found = {"comparison": [], "ipc": [], "wake": []}
        for name in sorted(os.listdir(data_dir)) if os.path.isdir(data_dir) else []:
            if not name.endswith(".jsonl"):
                continue
            source = Source(os.path.join(data_dir, name))
            found[source.kind].append(source)
        for kind, items in found.items():
            if kind == "wake":
                sources[kind] = newest_wake(items)
            elif items and not listed:
                sources[kind] = [max(items, key=lambda s: stamp_of(s.path))]
    return manifest, sources
