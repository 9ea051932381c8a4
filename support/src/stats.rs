//! Summaries over rounds (doc/benchmarking.md rule 1): the median with min and max, and the
//! per-round ratios of two variants that ran side by side.

use serde::Serialize;

/// The median, minimum and maximum of a set of samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    /// The middle sample: for an even count the upper of the two middle ones, so it is
    /// always a sample that was measured.
    pub median: f64,
    /// The smallest sample.
    pub min: f64,
    /// The largest sample.
    pub max: f64,
}

impl Spread {
    /// The spread of `samples`; `None` when there are none. NaN sorts last.
    pub fn of(samples: &[f64]) -> Option<Spread> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        Some(Spread {
            median: sorted[sorted.len() / 2],
            min: sorted[0],
            max: sorted[sorted.len() - 1],
        })
    }

    /// The spread of `f` over `items`, e.g. of one field over the rounds' results.
    pub fn of_each<T>(items: &[T], f: impl Fn(&T) -> f64) -> Option<Spread> {
        Spread::of(&items.iter().map(f).collect::<Vec<_>>())
    }
}

/// Round-by-round ratios `a[i] / b[i]` of two variants whose rounds ran back to back;
/// as long as the shorter of the two.
pub fn ratios(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x / y).collect()
}

/// The value at quantile `q` (0 to 1) of `sorted` (ascending), by the nearest rank;
/// `None` when it is empty.
pub fn percentile(sorted: &[u64], q: f64) -> Option<u64> {
    let last = sorted.len().checked_sub(1)?;
    Some(sorted[(last as f64 * q.clamp(0.0, 1.0)).round() as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_sample() {
        let s = Spread::of(&[5.0, 1.0, 3.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (3.0, 1.0, 5.0));
        let even = Spread::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!(even.median, 3.0, "upper middle");
        assert_eq!(Spread::of(&[]), None);
    }

    #[test]
    fn spread_of_a_field() {
        let runs = [(1, 2.0), (2, 6.0), (3, 4.0)];
        assert_eq!(Spread::of_each(&runs, |r| r.1).unwrap().median, 4.0);
    }

    #[test]
    fn ratios_pair_rounds() {
        assert_eq!(ratios(&[2.0, 9.0, 1.0], &[1.0, 3.0]), [2.0, 3.0]);
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let sorted: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&sorted, 0.5), Some(51));
        assert_eq!(percentile(&sorted, 0.0), Some(1));
        assert_eq!(percentile(&sorted, 1.0), Some(100));
        assert_eq!(percentile(&sorted, 0.99), Some(99));
        assert_eq!(percentile(&[], 0.5), None);
    }
}
