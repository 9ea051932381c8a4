//! Latency histograms: their bounds, how a child hands one over as text, and the quantiles
//! reported.

use hdrhistogram::Histogram;

pub fn histogram() -> Histogram<u64> {
    // 1 ns to 100 s at 3 significant digits.
    Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("valid bounds")
}

/// Bucket values and counts as text, so a child process can hand its histogram over.
pub fn dump(h: &Histogram<u64>) -> String {
    let buckets: Vec<String> = h
        .iter_recorded()
        .map(|v| format!("{}:{}", v.value_iterated_to(), v.count_at_value()))
        .collect();
    if buckets.is_empty() {
        "-".into()
    } else {
        buckets.join(",")
    }
}

pub fn undump(text: &str) -> Histogram<u64> {
    let mut h = histogram();
    for bucket in text.split(',').filter(|b| *b != "-") {
        let (value, count) = bucket.split_once(':').expect("bucket");
        h.saturating_record_n(value.parse().expect("value"), count.parse().expect("count"));
    }
    h
}

pub const QUANTILES: [(&str, f64); 5] = [
    ("p50", 0.5),
    ("p90", 0.9),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
];

pub fn percentiles_json(h: &Histogram<u64>) -> String {
    let mut parts: Vec<String> = QUANTILES
        .iter()
        .map(|(name, q)| format!("\"{name}\":{}", h.value_at_quantile(*q)))
        .collect();
    parts.push(format!("\"max\":{}", h.max()));
    parts.push(format!("\"count\":{}", h.len()));
    format!("{{{}}}", parts.join(","))
}

pub fn percentiles_line(h: &Histogram<u64>) -> String {
    let us = |ns: u64| format!("{:.2}", ns as f64 / 1000.0);
    format!(
        "p50 {} p90 {} p99 {} p99.9 {} p99.99 {} max {} µs (n={})",
        us(h.value_at_quantile(0.5)),
        us(h.value_at_quantile(0.9)),
        us(h.value_at_quantile(0.99)),
        us(h.value_at_quantile(0.999)),
        us(h.value_at_quantile(0.9999)),
        us(h.max()),
        h.len()
    )
}
