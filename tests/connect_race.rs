//! `connect` racing the owner's `create`: a process that connects while the channel is
//! still being made waits for it (or says it is not there yet), and never mistakes the
//! half-made objects for a corrupt channel.

mod support;

use std::sync::Barrier;
use std::time::{Duration, Instant};

use salias::{Config, Error, FifoMpsc};
use support::{Sample, unique_name};

#[test]
fn connecting_while_the_owner_creates_waits_for_it() {
    for round in 0..200 {
        let name = unique_name(&format!("race-{round}"));
        let barrier = Barrier::new(2);
        std::thread::scope(|scope| {
            let owner = scope.spawn(|| {
                barrier.wait();
                FifoMpsc::<Sample>::create(&Config::new(&name)).unwrap()
            });
            barrier.wait();
            let deadline = Instant::now() + Duration::from_secs(10);
            let peer = loop {
                match FifoMpsc::<Sample>::connect(&name) {
                    Ok(peer) => break peer,
                    // Not made yet, or made but not yet ready: both say so; retry.
                    Err(Error::NotFound { .. } | Error::Initializing { .. }) => {}
                    Err(other) => panic!("round {round}: connect during create failed: {other}"),
                }
                assert!(Instant::now() < deadline, "round {round}: never connected");
                std::hint::spin_loop();
            };
            let owner = owner.join().unwrap();
            peer.publisher().unwrap().offer(&Sample::new(0, round)).unwrap();
            let received = owner.subscriber().unwrap().try_recv().unwrap().map(|s| s.seq);
            assert_eq!(received, Some(round));
        });
    }
}
