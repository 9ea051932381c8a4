//! What C passes to create and connect: the channel's settings (`salias_config`) and the
//! description of a typed channel's message type (`salias_message_type`).

use std::ffi::c_char;
use std::time::Duration;

use salias::Config;
use salias::config::HugePages;
use salias::message::{Field, MessageType};

use crate::entry::{Failure, string};

/// Normal pages (the default).
pub const SALIAS_HUGE_PAGES_NONE: u32 = 0;
/// 2 MiB pages from a hugetlbfs mount.
pub const SALIAS_HUGE_PAGES_2MB: u32 = 1;
/// 1 GiB pages from a hugetlbfs mount.
pub const SALIAS_HUGE_PAGES_1GB: u32 = 2;

/// A channel's settings. Start from `salias_config_default(name)` and change what differs:
/// every field holds a real value, except where a field says what 0 (or null, or -1) means.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy)]
pub struct salias_config {
    /// The channel's name: letters, digits, '.', '_' and '-'.
    pub name: *const c_char,
    /// Bytes of ring per publisher (default 1 MiB).
    pub capacity: usize,
    /// Publisher slots (default 1).
    pub publishers: u32,
    /// Subscriber slots; 0: the kind's default (1 for Mpsc, 8 for Fanout).
    pub subscribers: u32,
    /// The largest message in bytes; 0 (the default): 4096 for a raw channel. A typed
    /// channel's messages are its type's size: leave it 0 (or that size).
    pub max_message_size: usize,
    /// How far a publisher may run ahead of the slowest tethered subscriber, in bytes;
    /// 0: the whole ring.
    pub publication_window: usize,
    /// Permission bits of the channel's objects (default 0600).
    pub permissions: u32,
    /// `SALIAS_HUGE_PAGES_NONE` (default), `_2MB` or `_1GB`.
    pub huge_pages: u32,
    /// The hugetlbfs mount for huge pages; null: `$SALIAS_HUGETLBFS_DIR`, else /dev/hugepages.
    pub hugetlbfs_dir: *const c_char,
    /// The NUMA node to bind the rings to; -1: none.
    pub numa_node: i32,
    /// Fanout: demote a tethered subscriber that holds publishers back longer than this, in
    /// nanoseconds; 0: never.
    pub tether_timeout_ns: u64,
    /// Keep the channel's name after the owner's handle is freed (default false).
    pub keep_on_drop: bool,
}

/// The default settings for a channel called `name` (a string the caller keeps alive
/// until the config is used).
#[unsafe(no_mangle)]
pub extern "C" fn salias_config_default(name: *const c_char) -> salias_config {
    salias_config {
        name,
        capacity: 1 << 20,
        publishers: 1,
        subscribers: 0,
        max_message_size: 0,
        publication_window: 0,
        permissions: 0o600,
        huge_pages: SALIAS_HUGE_PAGES_NONE,
        hugetlbfs_dir: std::ptr::null(),
        numa_node: -1,
        tether_timeout_ns: 0,
        keep_on_drop: false,
    }
}

/// One field of a message type: its name, its type as the Rust derive labels it (`u8`…
/// `u64`, `i8`…`i64`, `f32`, `f64`, arrays as `[u8;16]`, another struct by its name), and
/// where it lies.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy)]
pub struct salias_field {
    /// The field's name.
    pub name: *const c_char,
    /// The field's type label.
    pub type_label: *const c_char,
    /// `offsetof` the field.
    pub offset: usize,
    /// `sizeof` the field.
    pub size: usize,
}

/// A typed channel's message type, described by its fields: fingerprinted as the Rust
/// derive fingerprints the `#[repr(C)]` struct with the same fields, and checked at
/// connect against every other process's type. The fields must cover every byte (name
/// padding as a field), in offset order.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy)]
pub struct salias_message_type {
    /// The type's name, as the Rust side's `#[salias(name = ...)]` or struct name.
    pub name: *const c_char,
    /// `sizeof` the type.
    pub size: usize,
    /// `alignof` the type (at most 8).
    pub align: usize,
    /// The schema version, as the Rust side's `#[salias(version = N)]` (0 by default).
    pub schema_version: u32,
    /// The fields, in offset order.
    pub fields: *const salias_field,
    /// How many fields.
    pub field_count: usize,
}

/// The Rust config `config` describes, and the raw maximum it asks for (0: none).
///
/// # Safety
/// `config`'s strings are null or NUL-terminated and valid for the call.
pub(crate) unsafe fn to_config(config: &salias_config) -> Result<(Config, usize), Failure> {
    // SAFETY: the caller's contract.
    let name = unsafe { string(config.name, "config.name") }?;
    let mut rust = Config::new(name)
        .capacity(config.capacity)
        .publishers(config.publishers)
        .permissions(config.permissions)
        .keep_on_drop(config.keep_on_drop)
        .huge_pages(match config.huge_pages {
            SALIAS_HUGE_PAGES_NONE => HugePages::None,
            SALIAS_HUGE_PAGES_2MB => HugePages::Size2MB,
            SALIAS_HUGE_PAGES_1GB => HugePages::Size1GB,
            other => {
                return Err(Failure::argument(format!(
                    "config.huge_pages is {other}; use SALIAS_HUGE_PAGES_NONE, _2MB or _1GB"
                )));
            }
        });
    if config.subscribers != 0 {
        rust = rust.subscribers(config.subscribers);
    }
    if config.publication_window != 0 {
        rust = rust.publication_window(config.publication_window);
    }
    if !config.hugetlbfs_dir.is_null() {
        // SAFETY: the caller's contract.
        rust = rust.hugetlbfs_dir(unsafe { string(config.hugetlbfs_dir, "config.hugetlbfs_dir") }?);
    }
    match config.numa_node {
        -1 => {}
        node if node >= 0 => rust = rust.numa_node(node as u32),
        other => {
            return Err(Failure::argument(format!(
                "config.numa_node is {other}; use a node number, or -1 for none"
            )));
        }
    }
    if config.tether_timeout_ns != 0 {
        rust = rust.tether_timeout(Duration::from_nanos(config.tether_timeout_ns));
    }
    Ok((rust, config.max_message_size))
}

/// The Rust description of a C message type.
///
/// # Safety
/// `message_type`'s strings are NUL-terminated and `fields` points to `field_count`
/// fields, all valid for the call.
pub(crate) unsafe fn to_message_type(message_type: &salias_message_type) -> Result<MessageType, Failure> {
    // SAFETY: the caller's contract.
    let name = unsafe { string(message_type.name, "message_type.name") }?;
    let fields: &[salias_field] = match message_type.field_count {
        0 => &[],
        count if message_type.fields.is_null() => {
            return Err(Failure::argument(format!(
                "message_type.fields is a null pointer with field_count {count}"
            )));
        }
        // SAFETY: the caller's contract: `fields` points to `field_count` fields.
        count => unsafe { std::slice::from_raw_parts(message_type.fields, count) },
    };
    let mut described = Vec::with_capacity(fields.len());
    for (i, field) in fields.iter().enumerate() {
        // SAFETY: the caller's contract.
        let name = unsafe { string(field.name, &format!("message_type.fields[{i}].name")) }?;
        // SAFETY: the caller's contract.
        let label = unsafe { string(field.type_label, &format!("message_type.fields[{i}].type_label")) }?;
        described.push(Field::new(name, label, field.offset, field.size));
    }
    Ok(MessageType::new(
        name,
        message_type.size,
        message_type.align,
        message_type.schema_version,
        described,
    )?)
}
