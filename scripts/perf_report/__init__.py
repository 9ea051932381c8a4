"""scripts/report's code: load, compute, render (with page, render_throughput, render_latency) and svg."""
