//! Latency histograms (HdrHistogram, 1 ns to 1000 s at 3 significant digits) and the one
//! list of quantiles every latency figure reports: p50, p90, p99, p99.9, p99.99, then max
//! and count (doc/benchmarking.md rule 5).

use std::fmt;
use std::str::FromStr;

use hdrhistogram::Histogram;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::stats::percentile;

/// The quantiles reported, by name and value; [`Quantiles`] adds max and count.
pub const QUANTILES: [(&str, f64); 5] = [
    ("p50", 0.5),
    ("p90", 0.9),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
];

/// The largest value a [`histogram`] tells apart: 1000 s in ns; larger ones saturate.
pub const HIGHEST_NS: u64 = 1_000_000_000_000;

/// An empty histogram of nanoseconds: 1 ns to [`HIGHEST_NS`], 3 significant digits.
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("1 ns .. 1000 s at 3 digits are valid bounds")
}

/// The figures of one latency distribution, in ns: each of [`QUANTILES`], the maximum and
/// the count. Serialises as `{"p50":…,"p90":…,"p99":…,"p99.9":…,"p99.99":…,"max":…,"count":…}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Quantiles {
    /// The value at each of [`QUANTILES`], in its order.
    pub at: [u64; QUANTILES.len()],
    /// The largest value.
    pub max: u64,
    /// How many values.
    pub count: u64,
}

impl Quantiles {
    /// The quantiles of a histogram.
    pub fn of(h: &Histogram<u64>) -> Quantiles {
        Quantiles {
            at: QUANTILES.map(|(_, q)| h.value_at_quantile(q)),
            max: h.max(),
            count: h.len(),
        }
    }

    /// The quantiles of raw samples sorted ascending (nearest rank); all zero when empty.
    pub fn of_sorted(sorted: &[u64]) -> Quantiles {
        Quantiles {
            at: QUANTILES.map(|(_, q)| percentile(sorted, q).unwrap_or(0)),
            max: sorted.last().copied().unwrap_or(0),
            count: sorted.len() as u64,
        }
    }

    /// The median (p50).
    pub fn p50(&self) -> u64 {
        self.at[0]
    }

    /// The value at the quantile named `name` (`"p99.9"`), or `max`.
    pub fn get(&self, name: &str) -> Option<u64> {
        if name == "max" {
            return Some(self.max);
        }
        QUANTILES.iter().position(|(n, _)| *n == name).map(|i| self.at[i])
    }

    /// Every value (not the count) passed through `f`: `.map(|rtt| rtt / 2)` gives one way
    /// from round trips.
    pub fn map(self, f: impl Fn(u64) -> u64) -> Quantiles {
        Quantiles {
            at: self.at.map(&f),
            max: f(self.max),
            count: self.count,
        }
    }

    /// `p50 0.12 p90 … max 16.70 µs (n=200000)`: the values in microseconds.
    pub fn micros(&self) -> String {
        let mut line = String::new();
        for ((name, _), value) in QUANTILES.iter().zip(self.at) {
            line.push_str(&format!("{name} {:.2} ", value as f64 / 1000.0));
        }
        line + &format!("max {:.2} µs (n={})", self.max as f64 / 1000.0, self.count)
    }
}

/// `p50 120 p90 135 … max 16695 ns (n=200000)`.
impl fmt::Display for Quantiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for ((name, _), value) in QUANTILES.iter().zip(self.at) {
            write!(f, "{name} {value} ")?;
        }
        write!(f, "max {} ns (n={})", self.max, self.count)
    }
}

impl Serialize for Quantiles {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(QUANTILES.len() + 2))?;
        for ((name, _), value) in QUANTILES.iter().zip(self.at) {
            map.serialize_entry(name, &value)?;
        }
        map.serialize_entry("max", &self.max)?;
        map.serialize_entry("count", &self.count)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for Quantiles {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Quantiles, D::Error> {
        struct QuantilesVisitor;
        impl<'de> Visitor<'de> for QuantilesVisitor {
            type Value = Quantiles;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of p50, p90, p99, p99.9, p99.99, max and count")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Quantiles, A::Error> {
                let mut at = [None; QUANTILES.len()];
                let (mut max, mut count) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    let slot = match key.as_str() {
                        "max" => &mut max,
                        "count" => &mut count,
                        name => match QUANTILES.iter().position(|(n, _)| *n == name) {
                            Some(i) => &mut at[i],
                            None => {
                                let known: Vec<&str> = QUANTILES.iter().map(|(n, _)| *n).collect();
                                return Err(de::Error::custom(format!(
                                    "unknown field `{name}`, expected {}, max or count",
                                    known.join(", ")
                                )));
                            }
                        },
                    };
                    if slot.replace(map.next_value()?).is_some() {
                        return Err(de::Error::custom(format!("duplicate field `{key}`")));
                    }
                }
                let missing = |name: &'static str| de::Error::missing_field(name);
                let mut values = [0; QUANTILES.len()];
                for (i, value) in at.into_iter().enumerate() {
                    values[i] = value.ok_or_else(|| missing(QUANTILES[i].0))?;
                }
                Ok(Quantiles {
                    at: values,
                    max: max.ok_or_else(|| missing("max"))?,
                    count: count.ok_or_else(|| missing("count"))?,
                })
            }
        }
        deserializer.deserialize_map(QuantilesVisitor)
    }
}

/// A histogram's recorded buckets as (value, count) pairs, so a child process can hand
/// its histogram to the parent: as JSON (`[[120,3],[135,1]]`) or as text
/// (`120:3,135:1`, `-` when empty) in a report line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Buckets(pub Vec<(u64, u64)>);

impl Buckets {
    /// The recorded buckets of `h`.
    pub fn of(h: &Histogram<u64>) -> Buckets {
        Buckets(
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect(),
        )
    }

    /// A [`histogram`] holding these buckets.
    pub fn to_histogram(&self) -> Histogram<u64> {
        let mut h = histogram();
        for &(value, count) in &self.0 {
            h.saturating_record_n(value, count);
        }
        h
    }
}

impl fmt::Display for Buckets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("-");
        }
        for (i, (value, count)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{value}:{count}")?;
        }
        Ok(())
    }
}

/// Text that is not `value:count,…` or `-`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketsError(String);

impl fmt::Display for BucketsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "histogram buckets {:?} are not value:count pairs separated by commas (or - for none)",
            self.0
        )
    }
}

impl std::error::Error for BucketsError {}

impl FromStr for Buckets {
    type Err = BucketsError;
    fn from_str(text: &str) -> Result<Buckets, BucketsError> {
        if text == "-" {
            return Ok(Buckets::default());
        }
        let bad = || BucketsError(text.to_owned());
        text.split(',')
            .map(|bucket| {
                let (value, count) = bucket.split_once(':').ok_or_else(bad)?;
                Ok((value.parse().map_err(|_| bad())?, count.parse().map_err(|_| bad())?))
            })
            .collect::<Result<_, _>>()
            .map(Buckets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Quantiles {
        Quantiles {
            at: [60, 60, 65, 75, 190],
            max: 103303,
            count: 200000,
        }
    }

    #[test]
    fn quantiles_serialise_as_the_committed_data_have_them() {
        let json = serde_json::to_string(&sample()).unwrap();
        assert_eq!(
            json,
            r#"{"p50":60,"p90":60,"p99":65,"p99.9":75,"p99.99":190,"max":103303,"count":200000}"#
        );
        assert_eq!(serde_json::from_str::<Quantiles>(&json).unwrap(), sample());
    }

    #[test]
    fn incomplete_or_unknown_quantiles_do_not_decode() {
        let missing = serde_json::from_str::<Quantiles>(r#"{"p50":1,"max":2,"count":3}"#).unwrap_err();
        assert!(missing.to_string().contains("missing field `p90`"), "{missing}");
        let unknown = r#"{"p50":1,"p90":1,"p99":1,"p99.9":1,"p99.99":1,"max":2,"count":3,"p42":1}"#;
        assert!(serde_json::from_str::<Quantiles>(unknown).is_err());
    }

    #[test]
    fn quantiles_of_samples_and_of_a_histogram_agree() {
        let sorted: Vec<u64> = (1..=1000).collect();
        let raw = Quantiles::of_sorted(&sorted);
        assert_eq!(raw.at, [501, 900, 990, 999, 1000]);
        assert_eq!((raw.max, raw.count), (1000, 1000));
        let mut h = histogram();
        for v in &sorted {
            h.record(*v).unwrap();
        }
        let from_h = Quantiles::of(&h);
        assert_eq!(from_h.count, 1000);
        for (a, b) in from_h.at.iter().zip(raw.at) {
            assert!(a.abs_diff(b) <= 1, "{from_h:?} vs {raw:?}");
        }
        assert_eq!(Quantiles::of_sorted(&[]).count, 0);
    }

    #[test]
    fn one_way_halves_every_value_but_the_count() {
        let half = sample().map(|v| v / 2);
        assert_eq!(half.at, [30, 30, 32, 37, 95]);
        assert_eq!((half.max, half.count), (51651, 200000));
        assert_eq!(half.get("p99.9"), Some(37));
        assert_eq!(half.get("max"), Some(51651));
        assert_eq!(half.get("p42"), None);
    }

    #[test]
    fn quantiles_print_in_the_list_order() {
        assert_eq!(
            sample().to_string(),
            "p50 60 p90 60 p99 65 p99.9 75 p99.99 190 max 103303 ns (n=200000)"
        );
        assert!(sample().micros().starts_with("p50 0.06 p90 0.06"));
    }

    #[test]
    fn buckets_carry_a_histogram_as_text_and_json() {
        let mut h = histogram();
        for v in [120, 120, 135, 5000] {
            h.record(v).unwrap();
        }
        let buckets = Buckets::of(&h);
        let text = buckets.to_string();
        assert_eq!(text.parse::<Buckets>().unwrap(), buckets);
        let json = serde_json::to_string(&buckets).unwrap();
        assert_eq!(serde_json::from_str::<Buckets>(&json).unwrap(), buckets);
        assert_eq!(Quantiles::of(&buckets.to_histogram()), Quantiles::of(&h));
        assert_eq!(Buckets::default().to_string(), "-");
        assert_eq!("-".parse::<Buckets>().unwrap(), Buckets::default());
        assert!("12".parse::<Buckets>().is_err());
    }
}
