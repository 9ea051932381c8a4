//! Checking a copied control block before anything uses it: that it is a salias channel
//! of this layout version with this name, that its kind and message type are the ones
//! asked for, and that its geometry is consistent.

use super::Kind;
use super::geometry::Geometry;
use crate::config::MAX_NAME_LEN;
use crate::error::{Error, Result};
use crate::kind::{mode_name, topology_name};
use crate::message::Fingerprint;
use crate::platform;
use crate::wire::layout::{ChannelInfo, LAYOUT_VERSION, MAGIC, MAX_TYPE_NAME_LEN, WAKE_BY_BARRIER, WAKE_BY_FENCES};

/// Everything `connect` checks of a copied control block, in order: that it is a salias
/// channel of this layout version with this name, that it is the kind and carries the
/// type `kind` asks for, and that its geometry is consistent.
pub(super) fn validate_info(name: &str, info: &ChannelInfo, kind: Kind, object_len: u64) -> Result<Geometry> {
    check_identity(name, info)?;
    check_kind(name, info, kind)?;
    Geometry::of_info(name, info, object_len)
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
    if info.wake_protocol != platform::WAKE_PROTOCOL {
        return Err(Error::PlatformMismatch {
            name: name.to_owned(),
            channel_layer: wake_layer_name(info.wake_protocol),
            this_layer: wake_layer_name(platform::WAKE_PROTOCOL),
        });
    }
    Ok(())
}

/// The platform layer behind a recorded wake protocol, as `PlatformMismatch` names it.
fn wake_layer_name(wake_protocol: u32) -> &'static str {
    match wake_protocol {
        WAKE_BY_BARRIER => "the Linux layer (sleepers take a membarrier)",
        WAKE_BY_FENCES => "the portable layer (macOS, or Linux built with `--cfg salias_portable`; every side fences)",
        _ => "an unknown layer",
    }
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
    let names_match = type_name == kind.type_name;
    if !kind.any_type && (stored != requested || !names_match) {
        return Err(Error::TypeMismatch {
            name: name.to_owned(),
            channel_type: stored.describe(&type_name),
            requested_type: kind.fingerprint.describe(kind.type_name),
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
