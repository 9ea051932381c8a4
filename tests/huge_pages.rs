//! Explicit huge pages for real: mounts a private hugetlbfs, reserves 2 MiB pages, and runs
//! a channel on them, then checks that running out of huge pages is an error, never a
//! silent fallback. Needs root on Linux; elsewhere it prints why it skipped.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use salias::{Config, Error, FifoMpsc, SaliasMessage, config::HugePages};
use support::unique_name;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
#[repr(C)]
struct Tick {
    seq: u64,
    words: [u64; 7],
}

const NR_HUGEPAGES: &str = "/proc/sys/vm/nr_hugepages";

fn meminfo(field: &str) -> u64 {
    let info = std::fs::read_to_string("/proc/meminfo").unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A hugetlbfs mount with `pages` 2 MiB pages reserved; undone on drop.
struct HugeMount {
    dir: PathBuf,
    previous_pages: String,
}

impl HugeMount {
    fn new(pages: u64) -> Result<HugeMount, String> {
        if !cfg!(all(target_os = "linux", not(salias_portable))) {
            return Err("huge pages are a Linux feature of the native platform layer".into());
        }
        // Surplus pages would let a channel past the pool, so no shortage could be made.
        let overcommit = std::fs::read_to_string("/proc/sys/vm/nr_overcommit_hugepages").unwrap_or_default();
        if overcommit.trim().parse::<u64>().unwrap_or(0) > 0 {
            return Err(format!(
                "surplus huge pages are allowed (nr_overcommit_hugepages = {})",
                overcommit.trim()
            ));
        }
        let previous_pages = std::fs::read_to_string(NR_HUGEPAGES).map_err(|e| format!("{NR_HUGEPAGES}: {e}"))?;
        let wanted = previous_pages.trim().parse::<u64>().unwrap_or(0) + pages;
        std::fs::write(NR_HUGEPAGES, wanted.to_string())
            .map_err(|e| format!("cannot reserve huge pages ({e}); run as root"))?;
        let dir = std::env::temp_dir().join(unique_name("hugetlbfs"));
        std::fs::create_dir_all(&dir).unwrap();
        let mount = HugeMount { dir, previous_pages };
        let status = Command::new("mount")
            .args(["-t", "hugetlbfs", "-o", "pagesize=2M", "none"])
            .arg(&mount.dir)
            .status()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !status.success() {
            return Err(format!("mount -t hugetlbfs failed ({status}); needs root"));
        }
        if meminfo("HugePages_Free:") < pages {
            return Err(format!(
                "the kernel granted only {} free huge pages",
                meminfo("HugePages_Free:")
            ));
        }
        Ok(mount)
    }

    fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for HugeMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
        let _ = std::fs::remove_dir(&self.dir);
        let _ = std::fs::write(NR_HUGEPAGES, self.previous_pages.trim());
    }
}

#[test]
fn channel_on_2mib_huge_pages() {
    let mount = match HugeMount::new(4) {
        Ok(mount) => mount,
        Err(reason) => {
            support::skipped("channel_on_2mib_huge_pages", &reason);
            return;
        }
    };
    let free_before = meminfo("HugePages_Free:");
    let name = unique_name("huge");
    let config = Config::new(&name)
        .capacity(2 << 20)
        .publishers(2)
        .huge_pages(HugePages::Size2MB)
        .hugetlbfs_dir(mount.dir());
    let owner = FifoMpsc::<Tick>::create(&config).unwrap();
    assert_eq!(
        meminfo("HugePages_Free:"),
        free_before - 2,
        "one 2 MiB page per publisher ring"
    );

    // A second handle finds the rings through the directory recorded in the channel.
    let peer = FifoMpsc::<Tick>::connect(&name).unwrap();
    let mut publisher = peer.publisher().unwrap();
    let mut subscriber = owner.subscriber().unwrap();
    // 8 MiB of frames through a 2 MiB ring: it wraps four times.
    for seq in 0..100_000 {
        publisher.send(&Tick { seq, words: [seq; 7] }).unwrap();
        let tick = subscriber.try_recv().unwrap().unwrap();
        assert_eq!((tick.seq, tick.words[6]), (seq, seq));
    }

    // Asking for more huge pages than are free (the pool is the machine's, so it may hold
    // more than this test reserved) fails; it does not fall back.
    let free_pages = meminfo("HugePages_Free:");
    let too_many = ((free_pages as usize + 1) * (2 << 20)).next_power_of_two();
    let greedy = Config::new(unique_name("huge-greedy"))
        .capacity(too_many)
        .huge_pages(HugePages::Size2MB)
        .hugetlbfs_dir(mount.dir());
    // The pages are reserved at create, so the shortage is told there, with the numbers:
    // the pool's free pages as they were before the failed reservation took some.
    match FifoMpsc::<Tick>::create(&greedy) {
        Err(
            err @ Error::NoSpace {
                needed,
                available,
                huge_pages: true,
                ..
            },
        ) => {
            assert_eq!(needed, too_many as u64);
            assert_eq!(available, free_pages * (2 << 20), "{err}");
            assert!(err.to_string().contains("nr_hugepages"), "{err}");
        }
        other => panic!("expected a huge page shortage to fail, got {other:?}"),
    }
    drop((publisher, subscriber, peer, owner));
    assert_eq!(
        meminfo("HugePages_Free:"),
        free_before,
        "the rings' pages were given back"
    );
}

#[test]
fn one_gib_pages_without_a_mount_fail() {
    let err = FifoMpsc::<Tick>::create(
        &Config::new(unique_name("huge-1g"))
            .capacity(1 << 30)
            .huge_pages(HugePages::Size1GB)
            .hugetlbfs_dir("/nonexistent/hugepages-1G"),
    )
    .unwrap_err();
    assert!(
        matches!(err, Error::Platform { call: "statfs", .. } | Error::Unsupported { .. }),
        "{err}"
    );
}
