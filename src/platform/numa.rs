//! Checking that a NUMA node exists before binding rings to it.

use crate::error::{Error, Result};
#[cfg(all(target_os = "linux", not(salias_portable)))]
use std::path::Path;

#[cfg(all(target_os = "linux", not(salias_portable)))]
pub(crate) fn check_numa_node(node: u32) -> Result<()> {
    if Path::new(&format!("/sys/devices/system/node/node{node}")).exists() {
        return Ok(());
    }
    let mut nodes: Vec<String> = std::fs::read_dir("/sys/devices/system/node")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix("node"))
                .map(str::to_owned)
        })
        .filter(|n| n.parse::<u32>().is_ok())
        .collect();
    nodes.sort();
    Err(Error::config(
        "numa_node",
        format!(
            "node {node} does not exist on this machine (its nodes: {}); pick one of those",
            if nodes.is_empty() {
                "none reported".to_owned()
            } else {
                nodes.join(", ")
            }
        ),
    ))
}

#[cfg(any(not(target_os = "linux"), salias_portable))]
pub(crate) fn check_numa_node(_node: u32) -> Result<()> {
    Err(Error::Unsupported {
        feature: "NUMA bindings",
        platform: super::PLATFORM_NAME,
    })
}
