"""The throughput sections: by system (comparison crate), by kind, topology and ring
(benches/ipc.rs), by message size, and the multi-producer stress."""

from . import svg
from .compute import WRITE_FLOOR, IpcKey, SizeKey, StressKey, cmp_name, delivered, size_text, topology
from .page import api_text, fmt_mmm, fmt_ratio, md_table, oversubscribed, split_tables


def refused(r):
    return r["refused_fraction"]


def busy_note(runs):
    """`3 to 5 busy processes each`, over the oversubscribed runs of `runs`."""
    busy = sorted({runs.first(k)["busy_processes"] for k in runs.order if oversubscribed(runs.first(k))})
    if not busy:
        return ""
    return f"{busy[0]} busy processes" if len(busy) == 1 else f"{busy[0]} to {busy[-1]} busy processes"


def cmp_size_text(key):
    """The buffer a comparison run had: iceoryx2's in messages, Aeron's term, a ring."""
    if key.system == "iceoryx2":
        return f"buffer {key.buffer_messages}"
    if key.system == "aeron":
        return f"term {size_text(key.ring_bytes)}"
    return f"ring {size_text(key.ring_bytes)}"


def by_system(page, data):
    runs = data.cmp_tp
    if not runs.order:
        return
    page.add("## Throughput by system (comparison crate)", "")
    page.add(
        "64-byte messages, one process per publisher and per subscriber; delivered = messages / "
        "time until the subscriber had the last one. Refused = refused attempts / attempts (each "
        "system's own notion of a refused offer; spin rates differ, so compare within a system).",
        "",
    )
    rows, flags = [], []
    groups, values = [], {}
    for key in runs.order:
        flags.append(oversubscribed(runs.first(key)))
        d = runs.stat(key, delivered)
        p = runs.stat(key, lambda r: r["published_per_s"])
        rf = runs.stat(key, refused)
        name = f"{cmp_name(key)} {key.publishers}P1S, {cmp_size_text(key)}"
        rows.append((name, fmt_mmm(d, 2, 1e-6), fmt_mmm(p, 2, 1e-6), fmt_mmm(rf, 2, 100.0), runs.first(key)["placement"], d[3]))
        groups.append(name)
        values[name] = (d[0] / 1e6, d[1] / 1e6, d[2] / 1e6)
    header = ["system / API", "delivered M msg/s", "published M msg/s", "refused %", "placement", "rounds"]
    split_tables(page, header, rows, ["l", "r", "r", "r", "l", "r"], flags, busy_note(runs))
    # Colour each bar by its system: one series per system.
    series = []
    for system in ("salias", "aeron", "iceoryx2", "spsc-floor"):
        vals = {g: values[g] for g, k in zip(groups, runs.order) if k.system == system}
        if vals:
            name = {"spsc-floor": "SPSC floor", "aeron": "Aeron"}.get(system, system)
            series.append({"name": name, "color": svg.color_for(system), "values": vals})
    if svg.hbar_chart(
        page.plot_path("throughput-by-system.svg"),
        "Throughput by system, 64-byte messages (median, whiskers min–max)",
        "delivered M msg/s",
        groups,
        series,
    ):
        page.plot_ref("throughput-by-system.svg", "throughput by system")


def by_kind(page, data):
    runs = data.ipc_tp
    if not runs.order:
        return
    page.add("## salias throughput by kind, topology and ring size (benches/ipc.rs)", "")
    page.add(
        "Delivered = messages × subscribers / time until the last subscriber had its last message "
        "(fan-out counts each delivery). More processes than cores share cores (see placement).",
        "",
    )
    kinds = [k for k in ("FifoMpsc", "FifoFanout", "OrderedMpsc", "OrderedFanout") if any(x.kind == k for x in runs.order)]
    shapes = [(1, 1), (2, 1), (1, 2), (2, 2)]
    shapes = [s for s in shapes if any((x.publishers, x.subscribers) == s for x in runs.order)]
    apis = [("offer", 1), ("offer_batch", 16)]

    def key(kind, shape, ring, api):
        return IpcKey(kind, shape[0], shape[1], ring, api[0], api[1])

    rows, flags = [], []
    for ring in data.rings:
        for kind in kinds:
            for shape in shapes:
                for api in apis:
                    k = key(kind, shape, ring, api)
                    if k not in runs.by_key:
                        continue
                    d = runs.stat(k, delivered)
                    rf = runs.stat(k, refused)
                    flags.append(oversubscribed(runs.first(k)))
                    rows.append((kind, topology(k), size_text(ring), api_text(k.batch), fmt_mmm(d, 2, 1e-6), fmt_mmm(rf, 2, 100.0), runs.first(k)["placement"], d[3]))
    header = ["kind", "topology", "ring", "API", "delivered M msg/s", "refused %", "placement", "rounds"]
    split_tables(page, header, rows, ["l", "l", "r", "l", "r", "r", "l", "r"], flags, busy_note(runs))
    huge = [k for k in runs.order if k.huge_page_bytes]
    if huge:
        page.add(
            "The ring-size runs again with the rings on huge pages (`Config::huge_pages`, a "
            "hugetlbfs mount), in the same rounds; the table above is on the system's normal pages.",
            "",
        )
        rows = []
        for k in huge:
            d = runs.stat(k, delivered)
            ring = f"{size_text(k.ring_bytes)} on {size_text(k.huge_page_bytes)} pages"
            rows.append((k.kind, topology(k), ring, api_text(k.batch), fmt_mmm(d, 2, 1e-6), fmt_mmm(runs.stat(k, refused), 2, 100.0), runs.first(k)["placement"], d[3]))
        page.add(md_table(header, rows, ["l", "l", "r", "l", "r", "r", "l", "r"]), "")
    shades = {}
    for i, ring in enumerate(data.rings):
        for j, api in enumerate(apis):
            shades[(ring, api)] = svg.EXTRA[(2 * i + j) % len(svg.EXTRA)]
    for kind in kinds:
        series = []
        for ring in data.rings:
            for api in apis:
                vals = {}
                for shape in shapes:
                    k = key(kind, shape, ring, api)
                    st = runs.stat(k, delivered)
                    if st:
                        vals[topology(k)] = (st[0] / 1e6, st[1] / 1e6, st[2] / 1e6)
                if vals:
                    series.append({"name": f"ring {size_text(ring)}, {api_text(api[1])}", "color": shades[(ring, api)], "values": vals})
        name = f"throughput-{kind}.svg"
        if svg.hbar_chart(
            page.plot_path(name),
            f"salias {kind}: throughput by topology and ring size",
            "delivered M msg/s (median, whiskers min–max)",
            [f"{p}P{s}S" for p, s in shapes],
            series,
        ):
            page.plot_ref(name, f"{kind} throughput by topology and ring size")


def by_size(page, data):
    runs = data.ipc_sz
    if not runs.order:
        return
    page.add("## Message size sweep (benches/ipc.rs)", "")
    page.add(
        "Raw frames (`Channel<Bytes, Fifo, Mpsc>`) of each size, 1P1S, 4 MiB ring, single `offer` and "
        "`offer_batch` of 16; every frame's length, first 8 bytes and last byte are checked. "
        "Median [min, max] over the rounds.",
        "",
    )
    sizes = sorted({k.message_bytes for k in runs.order})
    salias_keys = [k for k in runs.order if k.batch != WRITE_FLOOR]
    placement = runs.first(salias_keys[0])["placement"] if salias_keys else "–"
    floors = any(k.batch == WRITE_FLOOR for k in runs.order)
    if floors:
        page.add(
            "The write floor ran in the same rounds: one process on the publisher's core writing each size's "
            "frames (salias's header and length) into a 4 MiB mapping, nothing reading them "
            "(benches/ipc/write_floor.rs). `/ floor` is the median of per-round ratios.",
            "",
        )
    rows = []
    for size in sizes:
        row = [f"{size} B"]
        floor = SizeKey(size, WRITE_FLOOR)
        for batch in (1, 16):
            st = runs.stat(SizeKey(size, batch), delivered)
            rf = runs.stat(SizeKey(size, batch), refused)
            if st:
                row += [fmt_mmm(st, 1, 1e-6), f"{st[0] * size / 1e9:.2f}", f"{rf[0] * 100:.2f} %"]
            else:
                row += ["–", "–", "–"]
            if floors:
                ratio = runs.ratio(SizeKey(size, batch), floor, delivered)
                row.append(f"{ratio[0]:.2f}×" if ratio else "–")
        if floors:
            st = runs.stat(floor, delivered)
            row.append(fmt_mmm(st, 1, 1e-6) if st else "–")
        row.append(placement)
        rows.append(row)
    if floors:
        header = ["size", "offer M msg/s", "offer GB/s", "refused", "offer / floor", "batch 16 M msg/s", "batch 16 GB/s", "refused", "batch / floor", "write floor M msg/s", "placement"]
    else:
        header = ["size", "offer M msg/s", "offer GB/s", "refused", "batch 16 M msg/s", "batch 16 GB/s", "refused", "placement"]
    page.add(md_table(header, rows, ["r"] * (len(header) - 1) + ["l"]), "")
    series = []
    for batch, color in ((1, "#1f77b4"), (16, "#ff7f0e")):
        pts = []
        for size in sizes:
            st = runs.stat(SizeKey(size, batch), delivered)
            if st:
                pts.append((size, st[0] * size / 1e9))
        series.append({"name": "offer" if batch == 1 else f"offer_batch of {batch}", "color": color, "points": pts})
    if svg.line_chart(
        page.plot_path("throughput-by-size.svg"),
        "salias FifoMpsc 1P1S: delivered bytes by message size",
        "message size (bytes, log scale)",
        "GB/s (median)",
        series,
        xticks=None,
        xlog=True,
    ):
        page.plot_ref("throughput-by-size.svg", "throughput by message size")


def stress(page, data):
    runs = data.ipc_st
    if not runs.order:
        return
    page.add("## Multi-producer stress (benches/ipc.rs)", "")
    page.add(
        "More publisher processes than cores, each with a 64 KiB ring so offers are refused often; "
        "one subscriber checks every message's per-publisher order and checksum, and for Ordered that "
        "the global sequence runs without a gap or repeat. Median [min, max] over the rounds.",
        "",
    )
    rows, flags = [], []
    for key in runs.order:
        st = runs.stat(key, delivered)
        rf = runs.stat(key, refused)
        flags.append(oversubscribed(runs.first(key)))
        rows.append([key.kind, f"{key.publishers}P1S", api_text(key.batch), fmt_mmm(st, 2, 1e-6), f"{rf[0] * 100:.1f} %", runs.first(key)["placement"]])
    header = ["kind", "topology", "api", "delivered M msg/s", "refused", "placement"]
    split_tables(page, header, rows, ["l", "l", "l", "r", "r", "l"], flags, busy_note(runs))
    for pubs in sorted({k.publishers for k in runs.order}):
        for batch in sorted({k.batch for k in runs.order}):
            r = runs.ratio(StressKey("OrderedMpsc", pubs, batch), StressKey("FifoMpsc", pubs, batch), delivered)
            if r:
                page.add(f"- Ordered / FIFO, {pubs} publishers, {api_text(batch)}: {fmt_ratio(r)}")
    page.add("")
