//! How a bridge joins zenoh: peer or client mode, the endpoints it listens on and connects
//! to, and whether it scouts for peers by multicast.

use std::path::PathBuf;

use zenoh::Wait;

use crate::error::{BridgeError, Result};

/// zenoh settings of one bridge side. The default is a peer that listens nowhere,
/// connects nowhere and scouts by multicast, which finds peers on one LAN; across
/// networks, or to keep discovery out of the picture, give explicit endpoints.
#[derive(Clone, Debug, Default)]
pub struct ZenohConfig {
    /// `client` (through a zenoh router) instead of `peer`.
    pub client: bool,
    /// Endpoints to listen on, e.g. `tcp/0.0.0.0:7447`.
    pub listen: Vec<String>,
    /// Endpoints to connect to, e.g. `tcp/192.0.2.7:7447`.
    pub connect: Vec<String>,
    /// Turn multicast scouting off (only explicit endpoints are used).
    pub no_multicast_scouting: bool,
    /// A zenoh JSON5 configuration file applied first; the fields above override it.
    pub file: Option<PathBuf>,
}

impl ZenohConfig {
    /// Explicit endpoints only: listen on `listen`, connect to `connect`, no scouting.
    pub fn explicit(listen: &[&str], connect: &[&str]) -> ZenohConfig {
        ZenohConfig {
            client: false,
            listen: listen.iter().map(|s| s.to_string()).collect(),
            connect: connect.iter().map(|s| s.to_string()).collect(),
            no_multicast_scouting: true,
            file: None,
        }
    }

    pub(crate) fn open(&self) -> Result<zenoh::Session> {
        let mut config = match &self.file {
            Some(path) => zenoh::Config::from_file(path).map_err(BridgeError::zenoh(format!(
                "reading the zenoh configuration {}",
                path.display()
            )))?,
            None => zenoh::Config::default(),
        };
        let mut set = |key: &str, value: String| {
            config
                .insert_json5(key, &value)
                .map_err(BridgeError::zenoh(format!("setting zenoh's {key} to {value}")))
        };
        set("mode", json(if self.client { "client" } else { "peer" }))?;
        if !self.listen.is_empty() {
            set("listen/endpoints", json_list(&self.listen))?;
        }
        if !self.connect.is_empty() {
            set("connect/endpoints", json_list(&self.connect))?;
        }
        if self.no_multicast_scouting {
            set("scouting/multicast/enabled", "false".into())?;
        }
        zenoh::open(config)
            .wait()
            .map_err(BridgeError::zenoh("opening the zenoh session"))
    }
}

fn json(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| json(s)).collect();
    format!("[{}]", quoted.join(","))
}

/// The liveliness key under which `out` sides announce themselves to `in` sides.
pub(crate) fn liveliness_key(key: &str, stream_id: Option<u64>) -> String {
    match stream_id {
        Some(id) => format!("{key}/salias-bridge-out/{id:016x}"),
        None => format!("{key}/salias-bridge-out/*"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(super::json(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(super::json_list(&["tcp/127.0.0.1:1".into()]), r#"["tcp/127.0.0.1:1"]"#);
    }
}
