//! What the roles of a flooding throughput run report when they are done, and the rates
//! their parent makes of those reports: one format for every harness's publishers and
//! subscribers.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A throughput role's report, sent once at its end ([`crate::role::report_json`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "report", rename_all = "snake_case")]
pub enum Finished {
    /// A publisher: from the start barrier to its last offer.
    Publisher {
        /// Time from the barrier to the last offer, ns.
        elapsed_ns: u64,
        /// Offers made, refused ones included.
        attempts: u64,
        /// Offers refused.
        refused: u64,
    },
    /// A subscriber: from the start barrier to its last message.
    Subscriber {
        /// Time from the barrier to the last message, ns.
        elapsed_ns: u64,
        /// Messages received (and checked).
        received: u64,
        /// Receive calls that handed out at least one message (salias's `drain`; 0 where
        /// a harness does not count them). With `received`, how many messages a call
        /// found: near the call's maximum while the subscriber stays behind its
        /// publishers, a few once it has caught up and waits on the frame being written.
        #[serde(default)]
        drains: u64,
    },
}

/// A run's reports added up: the slowest publisher and subscriber set the rates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Publishers that reported.
    pub publishers: u32,
    /// Subscribers that reported.
    pub subscribers: u32,
    /// The longest publisher time, ns.
    pub publish_ns: u64,
    /// The longest subscriber time, ns.
    pub deliver_ns: u64,
    /// Offers of all publishers.
    pub attempts: u64,
    /// Refused offers of all publishers.
    pub refused: u64,
    /// Messages of all subscribers.
    pub received: u64,
    /// Receive calls of all subscribers that found messages.
    pub drains: u64,
}

/// A run's rates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rates {
    /// Messages published per second, all publishers together.
    pub published_per_s: f64,
    /// Messages delivered per second, all subscribers together.
    pub delivered_per_s: f64,
    /// Refused offers over all offers.
    pub refused_fraction: f64,
    /// Messages per receive call that found any, where the subscribers counted them.
    pub messages_per_drain: Option<f64>,
}

impl Tally {
    /// Adds one report.
    pub fn add(&mut self, report: &Finished) {
        match *report {
            Finished::Publisher {
                elapsed_ns,
                attempts,
                refused,
            } => {
                self.publishers += 1;
                self.publish_ns = self.publish_ns.max(elapsed_ns);
                self.attempts += attempts;
                self.refused += refused;
            }
            Finished::Subscriber {
                elapsed_ns,
                received,
                drains,
            } => {
                self.subscribers += 1;
                self.deliver_ns = self.deliver_ns.max(elapsed_ns);
                self.received += received;
                self.drains += drains;
            }
        }
    }

    /// The rates, once `publishers` and `subscribers` have each reported; an error names
    /// who did not.
    pub fn rates(&self, messages_per_publisher: u64, publishers: u32, subscribers: u32) -> Result<Rates, Missing> {
        if (self.publishers, self.subscribers) != (publishers, subscribers) {
            return Err(Missing {
                expected: (publishers, subscribers),
                got: (self.publishers, self.subscribers),
            });
        }
        let published = messages_per_publisher as f64 * publishers as f64;
        Ok(Rates {
            published_per_s: published / (self.publish_ns.max(1) as f64 / 1e9),
            delivered_per_s: self.received as f64 / (self.deliver_ns.max(1) as f64 / 1e9),
            refused_fraction: self.refused as f64 / self.attempts.max(1) as f64,
            messages_per_drain: (self.drains > 0).then(|| self.received as f64 / self.drains as f64),
        })
    }
}

/// Not every role of a run reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Missing {
    expected: (u32, u32),
    got: (u32, u32),
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} publishers and {} of {} subscribers reported; a role that ends without its report is a harness fault",
            self.got.0, self.expected.0, self.got.1, self.expected.1
        )
    }
}

impl std::error::Error for Missing {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slowest_role_sets_the_rate() {
        let mut tally = Tally::default();
        for report in [
            Finished::Publisher {
                elapsed_ns: 1_000_000_000,
                attempts: 150,
                refused: 50,
            },
            Finished::Publisher {
                elapsed_ns: 500_000_000,
                attempts: 50,
                refused: 0,
            },
            Finished::Subscriber {
                elapsed_ns: 2_000_000_000,
                received: 200,
                drains: 50,
            },
        ] {
            tally.add(&report);
        }
        let rates = tally.rates(100, 2, 1).unwrap();
        assert_eq!(rates.published_per_s, 200.0);
        assert_eq!(rates.delivered_per_s, 100.0);
        assert_eq!(rates.refused_fraction, 0.25);
        assert_eq!(rates.messages_per_drain, Some(4.0));
        tally.drains = 0;
        assert_eq!(tally.rates(100, 2, 1).unwrap().messages_per_drain, None, "not counted");
        let missing = tally.rates(100, 2, 2).unwrap_err().to_string();
        assert!(
            missing.starts_with("2 of 2 publishers and 1 of 2 subscribers reported"),
            "{missing}"
        );
    }

    #[test]
    fn reports_travel_as_tagged_json() {
        let report = Finished::Subscriber {
            elapsed_ns: 5,
            received: 7,
            drains: 3,
        };
        let json = serde_json::to_string(&report).unwrap();
        assert_eq!(
            json,
            r#"{"report":"subscriber","elapsed_ns":5,"received":7,"drains":3}"#
        );
        assert_eq!(serde_json::from_str::<Finished>(&json).unwrap(), report);
    }
}
