//! The machine a figure was measured on, as every raw-data header records it.

use std::fmt;

use crate::cores::cores;

/// CPU model, core count and kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// The CPU's model name from /proc/cpuinfo, or "unknown cpu".
    pub cpu: String,
    /// The cores this process may use ([`crate::cores::cores`]).
    pub cores: usize,
    /// The kernel release, or "" where /proc does not say.
    pub kernel: String,
}

impl Machine {
    /// This machine.
    pub fn detect() -> Machine {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| {
                info.lines()
                    .find(|l| l.starts_with("model name"))
                    .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
            })
            .unwrap_or_else(|| "unknown cpu".into());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        Machine {
            cpu,
            cores: cores(),
            kernel: kernel.trim().to_owned(),
        }
    }
}

/// `AMD EPYC, 2 cores, Linux 6.1.0`, as the headers have it.
impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {} cores, Linux {}", self.cpu, self.cores, self.kernel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_description_names_cpu_cores_and_kernel() {
        let m = Machine {
            cpu: "AMD EPYC".into(),
            cores: 2,
            kernel: "6.1.0".into(),
        };
        assert_eq!(m.to_string(), "AMD EPYC, 2 cores, Linux 6.1.0");
        assert!(Machine::detect().cores >= 1);
    }
}
