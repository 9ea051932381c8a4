//! A channel's geometry, one value whether it comes from the `Config` a channel is created
//! with or from the control block a process connects to, and every rule it must meet,
//! each written once. A config that breaks one says which setting and what to do; a
//! control block that breaks one is corrupt.

use std::time::Duration;

use super::Kind;
use crate::config::{ChannelSettings, Config, HugePages, MAX_CAPACITY, MAX_PUBLISHERS, MAX_SUBSCRIBERS, validate_name};
use crate::error::{Error, Result};
use crate::kind::{Fanout, Fifo, Mode, Mpsc, Ordered, Topology};
use crate::platform;
use crate::wire::frame::{self, round_up};
use crate::wire::layout::{ChannelInfo, ControlLayout};

/// A channel's slots, rings and message limits, validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Geometry {
    pub publishers: u32,
    pub subscribers: u32,
    /// Bytes of ring per publisher.
    pub capacity: usize,
    pub window: usize,
    pub max_message_len: usize,
    pub frame_align: usize,
    /// The mode's frame header, rounded up to `frame_align`.
    pub header_len: usize,
    pub huge_pages: HugePages,
    /// As the control block keeps it: 0 for never.
    pub tether_timeout_ns: u64,
    /// Whether the channel carries a message type (raw channels record no layout hash).
    pub typed: bool,
}

impl Geometry {
    /// The geometry `config` asks for a channel of `kind`, with every setting checked in
    /// the order a user reads them; the name and permissions too, so that a config is
    /// validated in one place.
    pub(super) fn of_config<C: ChannelSettings>(config: &Config<C>, kind: &Kind) -> Result<Geometry> {
        validate_name(&config.name)?;
        let huge_pages = config.huge_pages;
        let page = page_size(huge_pages);
        let capacity = config.capacity;
        if let Some(problem) = capacity_problem(capacity as u64, page as u64) {
            return Err(Error::config("capacity", problem.advice(capacity, page, huge_pages)));
        }
        let fanout = kind.topology == Fanout::ID;
        let subscribers = config.subscriber_slots(fanout);
        for (field, slots, max, role) in [
            ("publishers", config.publishers, MAX_PUBLISHERS, "publisher"),
            ("subscribers", subscribers, MAX_SUBSCRIBERS, "subscriber"),
        ] {
            match slots_problem(slots, max) {
                Some(Slots::None) => {
                    return Err(Error::config(
                        field,
                        format!("it is 0; a channel needs at least 1 {role} slot"),
                    ));
                }
                Some(Slots::TooMany) => {
                    return Err(Error::config(
                        field,
                        format!("{slots} {role} slots is more than the limit of {max}"),
                    ));
                }
                None => {}
            }
        }
        let max_message_len = match kind.fixed_len {
            Some(len) => len,
            None => {
                let max = config.max_message_size;
                if max == 0 {
                    return Err(Error::config(
                        "max_message_size",
                        "it is 0; raw channels need a maximum of at least 1 byte",
                    ));
                }
                if max > u32::MAX as usize {
                    return Err(Error::config(
                        "max_message_size",
                        format!("{max} bytes does not fit the 32-bit frame length"),
                    ));
                }
                max
            }
        };
        let geometry = Geometry {
            publishers: config.publishers,
            subscribers,
            capacity,
            window: config.publication_window.unwrap_or(capacity),
            max_message_len,
            frame_align: kind.frame_align,
            header_len: kind.header_len,
            huge_pages,
            tether_timeout_ns: 0,
            typed: kind.fingerprint.layout_hash != 0,
        };
        let (window, frame) = (geometry.window, geometry.largest_frame());
        match window_problem(window as u64, capacity as u64, frame as u64) {
            Some(Window::OverCapacity) => {
                return Err(Error::config(
                    "publication_window",
                    format!(
                        "{window} bytes is larger than the ring capacity ({capacity} bytes); use at most the capacity"
                    ),
                ));
            }
            Some(Window::UnderFrame) => {
                let field = if config.publication_window.is_some() {
                    "publication_window"
                } else {
                    "capacity"
                };
                return Err(Error::config(
                    field,
                    format!(
                        "{window} bytes cannot hold one largest message ({max_message_len} bytes payload, {frame} bytes framed); make it at least {frame} bytes"
                    ),
                ));
            }
            None => {}
        }
        check_permissions(config.permissions)?;
        let tether_timeout_ns = tether_timeout_ns(config.tether_timeout, fanout)?;
        if too_many_subscribers(kind.topology, subscribers) {
            return Err(Error::config(
                "subscribers",
                format!(
                    "an Mpsc channel has exactly 1 subscriber slot, not {subscribers}; use a Fanout channel for several subscribers"
                ),
            ));
        }
        Ok(Geometry {
            tether_timeout_ns,
            ..geometry
        })
    }

    /// The geometry a copied control block records, whatever handle reads it: its kind
    /// is one salias knows and every rule holds, and the control object (`object_len`
    /// bytes) and the recorded ring size are what follows from it.
    pub(super) fn of_info(name: &str, info: &ChannelInfo, object_len: u64) -> Result<Geometry> {
        let corrupt = |what: String| Error::corrupt(name, what);
        let typed = info.message_type.layout_hash != 0;
        let mode_header = match info.mode {
            Fifo::ID => frame::mode_header_len(false, typed),
            Ordered::ID => frame::mode_header_len(true, typed),
            mode => return Err(corrupt(format!("it declares mode {mode}"))),
        };
        if ![Mpsc::ID, Fanout::ID].contains(&info.topology) {
            return Err(corrupt(format!("it declares topology {}", info.topology)));
        }
        let frame_align = info.frame_align as usize;
        if !frame_align.is_power_of_two() || !(8..=4096).contains(&frame_align) {
            return Err(corrupt(format!("its frames are aligned to {frame_align} bytes")));
        }
        if slots_problem(info.publishers, MAX_PUBLISHERS).is_some() {
            return Err(corrupt(format!("it declares {} publisher slots", info.publishers)));
        }
        if slots_problem(info.subscribers, MAX_SUBSCRIBERS).is_some()
            || too_many_subscribers(info.topology, info.subscribers)
        {
            return Err(corrupt(format!("it declares {} subscriber slots", info.subscribers)));
        }
        let huge_pages = HugePages::from_raw(info.huge_pages)
            .ok_or_else(|| corrupt(format!("unknown huge page setting {}", info.huge_pages)))?;
        let page = page_size(huge_pages) as u64;
        let capacity = info.capacity;
        if capacity_problem(capacity, page).is_some() {
            return Err(corrupt(format!(
                "its ring capacity {capacity} is not a power-of-two multiple of {page}"
            )));
        }
        let geometry = Geometry {
            publishers: info.publishers,
            subscribers: info.subscribers,
            capacity: capacity as usize,
            window: info.publication_window as usize,
            max_message_len: info.max_message_len as usize,
            frame_align,
            header_len: round_up(mode_header, frame_align),
            huge_pages,
            tether_timeout_ns: info.tether_timeout_ns,
            typed,
        };
        let (max, window) = (geometry.max_message_len, info.publication_window);
        if window_problem(window, capacity, geometry.largest_frame() as u64).is_some() {
            return Err(corrupt(format!(
                "its publication window {window} does not fit between one {max}-byte message and the capacity {capacity}"
            )));
        }
        let layout = geometry.layout();
        if info.control_len != layout.len as u64 || object_len < layout.len as u64 {
            return Err(corrupt(format!(
                "its control block is {object_len} bytes, {} expected",
                layout.len
            )));
        }
        if info.ring_object_len != geometry.ring_object_len() {
            return Err(corrupt(format!(
                "its ring memory size {} is inconsistent",
                info.ring_object_len
            )));
        }
        Ok(geometry)
    }

    /// Where the slot tables and cursors lie in the control block.
    pub(super) fn layout(&self) -> ControlLayout {
        ControlLayout::new(self.publishers, self.subscribers)
    }

    /// Bytes of the ring object: every publisher's ring.
    pub(super) fn ring_object_len(&self) -> u64 {
        self.capacity as u64 * self.publishers as u64
    }

    /// Bytes the channel takes of the shared-memory filesystem: the control block, and the
    /// rings unless huge pages back them (those come from the kernel's huge page pool).
    pub(super) fn shm_needed(&self) -> u64 {
        let control = self.layout().len as u64;
        match self.huge_pages.size() {
            Some(_) => control,
            None => control + self.ring_object_len(),
        }
    }

    /// Bytes a frame of one largest message occupies.
    fn largest_frame(&self) -> usize {
        frame::frame_len(self.header_len, self.max_message_len, self.frame_align)
    }

    /// Fanout: how long a tethered subscriber may hold a publisher back (`None`: forever).
    pub(super) fn tether_timeout(&self) -> Option<Duration> {
        (self.tether_timeout_ns != 0).then(|| Duration::from_nanos(self.tether_timeout_ns))
    }
}

/// The granularity of the rings' memory: the huge page size, or the system's page size.
pub(super) fn page_size(huge_pages: HugePages) -> usize {
    huge_pages.size().unwrap_or_else(platform::page_size)
}

/// What breaks the rule for a ring's capacity: a power of two, a multiple of the page
/// size, at most `MAX_CAPACITY`.
enum Capacity {
    Zero,
    NotPowerOfTwo,
    NotPageMultiple,
    TooLarge,
}

fn capacity_problem(capacity: u64, page: u64) -> Option<Capacity> {
    if capacity == 0 {
        Some(Capacity::Zero)
    } else if !capacity.is_power_of_two() {
        Some(Capacity::NotPowerOfTwo)
    } else if !capacity.is_multiple_of(page) {
        Some(Capacity::NotPageMultiple)
    } else if capacity > MAX_CAPACITY as u64 {
        Some(Capacity::TooLarge)
    } else {
        None
    }
}

impl Capacity {
    /// What a user who asked for `capacity` bytes is told.
    fn advice(&self, capacity: usize, page: usize, huge_pages: HugePages) -> String {
        match self {
            Capacity::Zero => {
                "it is 0; give each publisher ring a power of two of at least one page, e.g. 1 MiB".to_owned()
            }
            Capacity::NotPowerOfTwo => {
                // Above the largest power of two a usize holds there is none to suggest
                // going up to (and `next_power_of_two` would overflow): suggest the one below.
                let nearest = capacity.checked_next_power_of_two().unwrap_or(1 << (usize::BITS - 1));
                format!("{capacity} bytes is not a power of two; try {nearest} bytes")
            }
            Capacity::NotPageMultiple => {
                let what = if huge_pages.size().is_some() {
                    "huge page"
                } else {
                    "page"
                };
                format!(
                    "{capacity} bytes is not a multiple of the {what} size ({page} bytes); use at least {page} bytes"
                )
            }
            Capacity::TooLarge => format!("{capacity} bytes is larger than the limit of {MAX_CAPACITY} bytes"),
        }
    }
}

/// What breaks the rule for a count of slots: 1 to the limit.
enum Slots {
    None,
    TooMany,
}

fn slots_problem(slots: u32, max: u32) -> Option<Slots> {
    match slots {
        0 => Some(Slots::None),
        _ if slots > max => Some(Slots::TooMany),
        _ => None,
    }
}

/// An Mpsc channel has exactly one subscriber slot.
fn too_many_subscribers(topology: u32, subscribers: u32) -> bool {
    topology == Mpsc::ID && subscribers != 1
}

/// What breaks the rule for the publication window: at most the capacity, and room for
/// one largest frame.
enum Window {
    OverCapacity,
    UnderFrame,
}

fn window_problem(window: u64, capacity: u64, largest_frame: u64) -> Option<Window> {
    if window > capacity {
        Some(Window::OverCapacity)
    } else if largest_frame > window {
        Some(Window::UnderFrame)
    } else {
        None
    }
}

fn check_permissions(mode: u32) -> Result<()> {
    if mode & !0o777 != 0 {
        return Err(Error::config(
            "permissions",
            format!("{mode:#o} has bits outside 0o777; give plain rwx bits such as 0o600"),
        ));
    }
    if mode & 0o600 != 0o600 {
        return Err(Error::config(
            "permissions",
            format!("{mode:#o} does not let the owner read and write; include 0o600"),
        ));
    }
    Ok(())
}

/// The tether timeout in nanoseconds as the control block keeps it (0: never), or why
/// it cannot be kept.
fn tether_timeout_ns(timeout: Option<Duration>, fanout: bool) -> Result<u64> {
    let Some(timeout) = timeout else {
        return Ok(0);
    };
    if !fanout {
        return Err(Error::config(
            "tether_timeout",
            "an Mpsc channel's one subscriber is always tethered and never demoted; drop the setting, or create a Fanout channel",
        ));
    }
    match u64::try_from(timeout.as_nanos()) {
        Ok(0) => Err(Error::config(
            "tether_timeout",
            "it is 0, which would demote a subscriber at the first refused offer; give a positive duration, or omit it to never demote",
        )),
        Ok(ns) => Ok(ns),
        Err(_) => Err(Error::config(
            "tether_timeout",
            format!("{timeout:?} is longer than 584 years; omit the setting to never demote"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Geometry;
    use crate::config::{Config, HugePages};
    use crate::kind::{Fanout, Fifo, Mode, Mpsc, Ordered, Topology};
    use crate::message::Fingerprint;
    use crate::message::derived::FieldLayout;
    use crate::platform::ObjectId;
    use crate::region::Kind;
    use crate::region::create::record;
    use crate::region::object::RingStore;
    use crate::wire::frame::round_up;

    fn kind(mode: u32, topology: u32, fixed_len: Option<usize>) -> Kind<'static> {
        let header = crate::wire::frame::mode_header_len(mode == Ordered::ID, fixed_len.is_some());
        let (frame_align, fingerprint) = match fixed_len {
            Some(len) => {
                let field = FieldLayout {
                    name: "words",
                    ty: "[u64; 8]",
                    offset: 0,
                    size: len,
                };
                (16, Fingerprint::of_fields("Tick", len, 16, &[field], 1))
            }
            None => (8, Fingerprint::BYTES),
        };
        Kind {
            mode,
            topology,
            fixed_len,
            frame_align,
            header_len: round_up(header, frame_align),
            fingerprint,
            type_name: fingerprint.name,
            fields: crate::region::Fields::Derived(&[]),
            any_type: false,
        }
    }

    /// What a creator records is what every process that connects reads back: the two
    /// ways to a geometry agree, whatever the kind and the settings that shape it.
    #[test]
    fn a_recorded_geometry_reads_back_unchanged() {
        let name = "geometry-round-trip";
        let kinds = [
            kind(Fifo::ID, Mpsc::ID, None),
            kind(Ordered::ID, Mpsc::ID, Some(64)),
            kind(Fifo::ID, Fanout::ID, Some(64)),
            kind(Ordered::ID, Fanout::ID, None),
        ];
        for kind in kinds {
            let fanout = kind.topology == Fanout::ID;
            let mut config = Config::new(name)
                .capacity(64 << 10)
                .publishers(3)
                .publication_window(16 << 10)
                .huge_pages(HugePages::None);
            if fanout {
                config = config.subscribers(5).tether_timeout(Duration::from_millis(7));
            }
            let config = config.max_message_size(1000);
            let made = Geometry::of_config(&config, &kind).expect("a valid config");
            let ring = ObjectId { device: 1, inode: 2 };
            let info = record(&config, &made, &kind, &RingStore::Shm(String::new()), ring);
            let read = Geometry::of_info(name, &info, made.layout().len as u64).expect("a valid record");
            assert_eq!(read, made);
            assert_eq!(read.tether_timeout(), fanout.then_some(Duration::from_millis(7)));
        }
    }
}
