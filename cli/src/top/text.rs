//! The text form of a `top` refresh: a heading, then a table of publisher slots and one of
//! subscriber slots.

use salias::status::SlotHolder;

use super::refresh::{Refresh, SubscriberRow};
use crate::commands::{carries, owner_summary};
use crate::table;

/// The refresh as lines of text, each ending in `\n`.
pub(crate) fn render(refresh: &Refresh<'_>) -> String {
    let status = refresh.status;
    let mut text = format!(
        "channel {:?}: {} of {}, owner {}\n",
        refresh.name,
        refresh.kind,
        carries(status),
        owner_summary(status)
    );
    text += &match refresh.seconds {
        Some(seconds) => format!("refresh {}, rates over the last {seconds:.2} s", refresh.refresh),
        None => format!("refresh {}, rates from the next refresh on", refresh.refresh),
    };
    if let Some(taken) = refresh.sequence {
        text += &format!("; global sequence: {taken} numbers taken");
    }
    text += "\n\n";

    let mut publishers = vec![
        [
            "PUBLISHER",
            "HOLDER",
            "PUBLISHED",
            "MSG/S",
            "BYTES/S",
            "REFUSED",
            "REFUSED/S",
        ]
        .map(String::from)
        .to_vec(),
    ];
    publishers.extend(refresh.publishers.iter().map(|row| {
        vec![
            row.slot.to_string(),
            holder(row.holder),
            row.published.to_string(),
            rate(row.rate),
            rate(row.rate_bytes),
            row.backpressured.to_string(),
            rate(row.backpressured_rate),
        ]
    }));
    text += &table::render(&publishers);
    text.push('\n');

    let mut subscribers = vec![
        [
            "SUBSCRIBER",
            "HOLDER",
            "KIND",
            "MSG/S",
            "BYTES/S",
            "LAG MSGS",
            "LAG BYTES",
            "MISSED",
            "MISSED/S",
        ]
        .map(String::from)
        .to_vec(),
    ];
    subscribers.extend(refresh.subscribers.iter().map(|row| {
        vec![
            row.slot.to_string(),
            holder(row.holder),
            kind(row),
            rate(row.rate),
            rate(row.rate_bytes),
            count(row.lag_messages),
            count(row.lag_bytes),
            row.missed.to_string(),
            rate(row.missed_rate),
        ]
    }));
    text += &table::render(&subscribers);
    text
}

fn holder(holder: SlotHolder) -> String {
    match holder {
        SlotHolder::Free => "-".into(),
        held => held.to_string(),
    }
}

/// The slot's kind; "-" for a free slot, which has none of its own.
fn kind(row: &SubscriberRow) -> String {
    match (row.holder, row.demoted) {
        (SlotHolder::Free, _) => "-".into(),
        (_, true) => format!("{} (demoted)", row.kind),
        (_, false) => row.kind.to_string(),
    }
}

fn count(count: Option<u64>) -> String {
    count.map_or_else(|| "-".into(), |count| count.to_string())
}

/// A rate in three significant figures or so, with k, M or G for thousands, millions and
/// billions; "-" where it is unknown.
pub(crate) fn rate(rate: Option<f64>) -> String {
    let Some(rate) = rate else { return "-".into() };
    let (scaled, unit) = [(1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(scale, _)| rate >= *scale)
        .map_or((rate, ""), |(scale, unit)| (rate / scale, unit));
    if unit.is_empty() && scaled == scaled.trunc() {
        format!("{scaled:.0}")
    } else if scaled < 10.0 {
        format!("{scaled:.2}{unit}")
    } else if scaled < 100.0 {
        format!("{scaled:.1}{unit}")
    } else {
        format!("{scaled:.0}{unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::rate;

    #[test]
    fn rates_read_in_three_figures() {
        let shown: Vec<String> = [
            None,
            Some(0.0),
            Some(2.5),
            Some(12.34),
            Some(999.0),
            Some(1234.0),
            Some(45_600.0),
        ]
        .into_iter()
        .chain([Some(7.89e6), Some(1.5e9)])
        .map(rate)
        .collect();
        assert_eq!(
            shown,
            ["-", "0", "2.50", "12.3", "999", "1.23k", "45.6k", "7.89M", "1.50G"]
        );
    }
}
