//! Whether this machine can back salias rings with 2 MiB huge pages, and at which sizes:
//! the ring-size runs repeat on them where it can (`Scale::huge_page_rings`).

use salias::config::HugePages;
use salias::{Config, FifoMpsc};

use crate::msg64::Msg64;

/// The ring sizes among `candidates` at which a one-publisher FifoMpsc channel on 2 MiB
/// pages could be created just now, and why the first that could not, could not (no
/// hugetlbfs mount, too few free pages: salias's own error). Sizes that are not a whole
/// number of huge pages are left out without trying.
pub fn usable(candidates: &[usize]) -> (Vec<usize>, Option<String>) {
    let page = HugePages::Size2MB.size().expect("2 MiB pages have a size");
    let name = format!("ipc-huge-probe-{}", std::process::id());
    let mut rings = Vec::new();
    let mut refused = None;
    for &ring in candidates.iter().filter(|&&ring| ring % page == 0) {
        let config = Config::new(&name).capacity(ring).huge_pages(HugePages::Size2MB);
        // Dropping the channel removes it and gives its pages back.
        match FifoMpsc::<Msg64>::create(&config) {
            Ok(_channel) => rings.push(ring),
            Err(e) => {
                refused.get_or_insert_with(|| format!("a {} MiB ring: {e}", ring >> 20));
            }
        }
    }
    (rings, refused)
}
