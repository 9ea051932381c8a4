//! What a run's parent creates and holds until its children are done: the salias
//! channels, iceoryx2 services and the SPSC floor's ring (Aeron's come from its driver),
//! and the names and streams that keep runs apart.

use std::sync::atomic::{AtomicU64, Ordering};

use iceoryx2::prelude::{Node, ipc};
use salias::{Channel, Config, Fanout, Fifo, Mpsc};
use support::records::System;
use support::shm::ShmFile;

use crate::baselines::spsc;
use crate::error::RunError;
use crate::message::Msg64;
use crate::setup::Setup;
use crate::transports::iceoryx2 as ice;

/// Per invocation: the Aeron driver's directory and the next free stream.
pub struct Ctx {
    /// Empty when Aeron does not run.
    pub aeron_dir: String,
    pub next_stream: i32,
}

impl Ctx {
    /// A stream pair of its own for the next run (ping-pong uses both).
    pub fn stream(&mut self) -> i32 {
        self.next_stream += 2;
        self.next_stream
    }
}

/// A name no other run of any invocation uses: `cmp-<tag>-<pid>-<round>-<n>`.
pub fn unique_name(tag: &str, round: usize) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        "cmp-{tag}-{}-{round}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

type SaliasChannel = Channel<Msg64, Fifo, Mpsc>;
type SaliasFanout = Channel<Msg64, Fifo, Fanout>;

/// Held, never read: dropping it removes the run's shared objects.
pub enum Resources {
    Salias(#[allow(dead_code)] Vec<SaliasChannel>),
    SaliasFanout(#[allow(dead_code)] SaliasFanout),
    Ice(
        #[allow(dead_code)] Vec<ice::Factory>,
        #[allow(dead_code)] Node<ipc::Service>,
    ),
    IceWake(
        #[allow(dead_code)] ice::Factory,
        #[allow(dead_code)] ice::EventFactory,
        #[allow(dead_code)] Node<ipc::Service>,
    ),
    Spsc(#[allow(dead_code)] ShmFile),
    None,
}

impl Resources {
    /// The shared objects of a throughput or open-loop run of `setup` named `name`.
    pub fn for_setup(setup: &Setup, name: &str) -> Result<Resources, RunError> {
        Ok(match setup.system {
            System::Salias => {
                let config = Config::new(name)
                    .capacity(setup.param as usize)
                    .publishers(setup.publishers)
                    .subscribers(setup.subscribers);
                if setup.subscribers > 1 {
                    Resources::SaliasFanout(SaliasFanout::create(&config).map_err(RunError::salias(name))?)
                } else {
                    Resources::Salias(vec![SaliasChannel::create(&config).map_err(RunError::salias(name))?])
                }
            }
            System::Iceoryx2 => {
                ice::quiet();
                let node = ice::node();
                let service = ice::throughput_service(&node, name, setup.publishers, setup.param, true);
                Resources::Ice(vec![service], node)
            }
            System::SpscFloor => Resources::Spsc(spsc::create_ring(name, setup.param).map_err(RunError::shm(name))?),
            System::Aeron | System::Floor | System::MessageFloor | System::RingFloor | System::WriteFloor => {
                Resources::None
            }
        })
    }

    /// The shared objects of a wake-up run of `system` named `name`.
    pub fn for_wake(system: System, name: &str) -> Result<Resources, RunError> {
        Ok(match system {
            System::Salias => Resources::Salias(vec![
                SaliasChannel::create(&Config::new(name)).map_err(RunError::salias(name))?,
            ]),
            System::Iceoryx2 => {
                ice::quiet();
                let node = ice::node();
                let data = ice::latency_service(&node, &format!("{name}/data"), true);
                let event = ice::event_service(&node, name, true);
                Resources::IceWake(data, event, node)
            }
            _ => Resources::None,
        })
    }

    /// The shared objects of a ping-pong run of `system` named `name`.
    pub fn for_pingpong(system: System, name: &str) -> Result<Resources, RunError> {
        Ok(match system {
            System::Salias => {
                let create = |end: &str| SaliasChannel::create(&Config::new(format!("{name}-{end}")));
                let ping = create("ping").map_err(RunError::salias(name))?;
                let pong = create("pong").map_err(RunError::salias(name))?;
                Resources::Salias(vec![ping, pong])
            }
            System::Iceoryx2 => {
                ice::quiet();
                let node = ice::node();
                let ping = ice::latency_service(&node, &format!("{name}/ping"), true);
                let pong = ice::latency_service(&node, &format!("{name}/pong"), true);
                Resources::Ice(vec![ping, pong], node)
            }
            _ => Resources::None,
        })
    }
}
