//! Checking a copied control block before anything uses it: that it is a salias channel
//! of this layout version with this name, that its kind and message type are the ones
//! asked for, and that its geometry is consistent.

use super::Kind;
use crate::config::{HugePages, MAX_CAPACITY, MAX_NAME_LEN, MAX_PUBLISHERS, MAX_SUBSCRIBERS};
use crate::error::{Error, Result};
use crate::kind::{Fanout, Fifo, Mode, Mpsc, Ordered, Topology, mode_name, topology_name};
use crate::message::Fingerprint;
use crate::platform;
use crate::wire::frame;
use crate::wire::layout::{ChannelInfo, ControlLayout, LAYOUT_VERSION, MAGIC, MAX_TYPE_NAME_LEN};

pub(super) struct Checked {
    pub(super) publishers: u32,
    pub(super) subscribers: u32,
    pub(super) capacity: usize,
    pub(super) window: usize,
    pub(super) max_message_len: usize,
    pub(super) huge_pages: HugePages,
    pub(super) typed: bool,
}

/// Everything `connect` checks of a copied control block, in order: that it is a salias
/// channel of this layout version with this name, that it is the kind and carries the
/// type `kind` asks for, and that its geometry is consistent.
pub(super) fn validate_info(name: &str, info: &ChannelInfo, kind: Kind, object_len: u64) -> Result<Checked> {
    check_identity(name, info)?;
    check_kind(name, info, kind)?;
    check_geometry(name, info, object_len)
}

/// That the block is a salias channel of this layout version, and this channel's.
pub(super) fn check_identity(name: &str, info: &ChannelInfo) -> Result<()> {
    let not_a_channel = |reason: &str| Error::NotAChannel {
        name: name.to_owned(),
        reason: reason.to_owned(),
    };
    if info.magic != MAGIC {
        return Err(not_a_channel("its first bytes are not the salias magic"));
    }
    if info.layout_version != LAYOUT_VERSION {
        return Err(Error::VersionMismatch {
            name: name.to_owned(),
            found: info.layout_version,
            supported: LAYOUT_VERSION,
        });
    }
    if info.name_len as usize > MAX_NAME_LEN || &info.name[..info.name_len as usize] != name.as_bytes() {
        return Err(not_a_channel("it belongs to a channel with another name"));
    }
    Ok(())
}

/// That the channel is the kind, and carries the message type, a handle of `kind` needs.
pub(super) fn check_kind(name: &str, info: &ChannelInfo, kind: Kind) -> Result<()> {
    if info.mode != kind.mode || info.topology != kind.topology {
        return Err(Error::KindMismatch {
            name: name.to_owned(),
            channel_kind: format!("{}{}", mode_name(info.mode), topology_name(info.topology)),
            requested_kind: kind.name(),
        });
    }
    let record = &info.message_type;
    let type_name = String::from_utf8_lossy(&record.name[..(record.name_len as usize).min(MAX_TYPE_NAME_LEN)]);
    let stored = Fingerprint {
        name: "",
        size: record.size,
        align: record.align,
        layout_hash: record.layout_hash,
        schema_version: record.schema_version,
    };
    let requested = Fingerprint {
        name: "",
        ..kind.fingerprint
    };
    let names_match = type_name == kind.fingerprint.name;
    if !kind.any_type && (stored != requested || !names_match) {
        return Err(Error::TypeMismatch {
            name: name.to_owned(),
            channel_type: stored.describe(&type_name),
            requested_type: kind.fingerprint.describe(kind.fingerprint.name),
        });
    }
    if info.frame_align as usize != kind.frame_align {
        return Err(Error::corrupt(
            name,
            format!(
                "its frames are aligned to {} bytes, this handle needs {}",
                info.frame_align, kind.frame_align
            ),
        ));
    }
    let max = info.max_message_len as usize;
    if let Some(fixed) = kind.fixed_len
        && !kind.any_type
        && max != fixed
    {
        return Err(Error::corrupt(
            name,
            format!("its message length {max} differs from the type's size {fixed}"),
        ));
    }
    Ok(())
}

/// That the channel's own geometry holds together, whatever handle reads it: its kind is
/// one salias knows, its slot counts, page size, capacity and window are in range and fit
/// one largest frame, and both objects are the sizes that follow. `object_len` is the
/// control object's size.
pub(super) fn check_geometry(name: &str, info: &ChannelInfo, object_len: u64) -> Result<Checked> {
    let corrupt = |what: String| Error::corrupt(name, what);
    let header_len = match info.mode {
        Fifo::ID => Fifo::HEADER_LEN,
        Ordered::ID => Ordered::HEADER_LEN,
        mode => return Err(corrupt(format!("it declares mode {mode}"))),
    };
    if ![Mpsc::ID, Fanout::ID].contains(&info.topology) {
        return Err(corrupt(format!("it declares topology {}", info.topology)));
    }
    let frame_align = info.frame_align as usize;
    if !frame_align.is_power_of_two() || !(8..=4096).contains(&frame_align) {
        return Err(corrupt(format!("its frames are aligned to {frame_align} bytes")));
    }
    if info.publishers == 0 || info.publishers > MAX_PUBLISHERS {
        return Err(corrupt(format!("it declares {} publisher slots", info.publishers)));
    }
    if info.subscribers == 0
        || info.subscribers > MAX_SUBSCRIBERS
        || (info.topology == Mpsc::ID && info.subscribers != 1)
    {
        return Err(corrupt(format!("it declares {} subscriber slots", info.subscribers)));
    }
    let huge_pages = HugePages::from_raw(info.huge_pages)
        .ok_or_else(|| corrupt(format!("unknown huge page setting {}", info.huge_pages)))?;
    let page = huge_pages.size().unwrap_or_else(platform::page_size) as u64;
    let capacity = info.capacity;
    if !capacity.is_power_of_two() || !capacity.is_multiple_of(page) || capacity > MAX_CAPACITY as u64 {
        return Err(corrupt(format!(
            "its ring capacity {capacity} is not a power-of-two multiple of {page}"
        )));
    }
    let max = info.max_message_len as usize;
    let window = info.publication_window;
    if window > capacity || frame::frame_len(header_len, max, frame_align) as u64 > window {
        return Err(corrupt(format!(
            "its publication window {window} does not fit between one {max}-byte message and the capacity {capacity}"
        )));
    }
    let layout = ControlLayout::new(info.publishers, info.subscribers);
    if info.control_len != layout.len as u64 || object_len < layout.len as u64 {
        return Err(corrupt(format!(
            "its control block is {object_len} bytes, {} expected",
            layout.len
        )));
    }
    if info.ring_object_len != capacity * info.publishers as u64 {
        return Err(corrupt(format!(
            "its ring memory size {} is inconsistent",
            info.ring_object_len
        )));
    }
    Ok(Checked {
        publishers: info.publishers,
        subscribers: info.subscribers,
        capacity: capacity as usize,
        window: window as usize,
        max_message_len: max,
        huge_pages,
        typed: info.message_type.layout_hash != 0,
    })
}
