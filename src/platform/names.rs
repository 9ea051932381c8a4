//! Shared-memory object names, both ways: the objects behind a channel name, and the
//! control object a file in the shared-memory directory may be.

/// The shared-memory object names behind a channel name. Names are hashed so they fit
/// macOS's 31-character limit on any channel name; the control block stores the full name
/// and every open checks it, so a hash collision is detected rather than followed.
pub(crate) struct ObjectNames {
    pub control: String,
    pub rings: String,
    /// File name of the rings inside a hugetlbfs directory.
    pub ring_file: String,
}

impl ObjectNames {
    pub(crate) fn of(name: &str) -> Self {
        let hash = crate::fnv::hash(crate::fnv::OFFSET, name.as_bytes());
        ObjectNames {
            control: format!("/salias-{hash:016x}.c"),
            rings: format!("/salias-{hash:016x}.r"),
            ring_file: format!("salias-{hash:016x}.r"),
        }
    }
}

impl ObjectNames {
    /// The shared-memory name of `file_name` (as listed in the shared-memory directory) if
    /// it is named like a salias control object. Only a name: whether the object is one,
    /// and whose, takes reading its header.
    pub(crate) fn control_object(file_name: &str) -> Option<String> {
        let hash = file_name.strip_prefix("salias-")?.strip_suffix(".c")?;
        (hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then(|| format!("/{file_name}"))
    }
}

#[cfg(test)]
mod tests {
    use super::ObjectNames;

    #[test]
    fn control_object_names_are_recognised_and_nothing_else() {
        let names = ObjectNames::of("quotes");
        let file = names.control.trim_start_matches('/');
        assert_eq!(ObjectNames::control_object(file), Some(names.control.clone()));
        for other in [
            names.rings.trim_start_matches('/'),
            "salias-xyz.c",
            "salias-0123456789abcdef.r",
            "other",
        ] {
            assert_eq!(ObjectNames::control_object(other), None, "{other}");
        }
    }

    /// macOS refuses shared-memory names longer than 31 bytes (`PSHMNAMLEN`), leading slash
    /// included; every channel name must map to names within it, and two channel names to
    /// different ones.
    #[test]
    fn object_names_fit_macos_limit() {
        let longest = "x".repeat(crate::wire::layout::MAX_NAME_LEN);
        let mut seen = std::collections::HashSet::new();
        for name in ["a", "quotes", "market-data.v2_eu", longest.as_str()] {
            let names = ObjectNames::of(name);
            for object in [&names.control, &names.rings] {
                assert!(object.len() <= 31, "{object:?} is {} bytes", object.len());
                assert!(object.starts_with('/') && !object[1..].contains('/'), "{object:?}");
                assert!(seen.insert(object.clone()), "{object:?} twice");
            }
        }
    }
}
