//! A child's whole life: it pins itself, opens its run's barrier and plays its role, the
//! part's loop over the system's ends.

use std::error::Error;

use salias::{Fanout, Mpsc};
use support::barrier::Barrier;
use support::cores::pin;

use crate::baselines::{latency, spsc};
use crate::message::Msg64;
use crate::roles::{Params, ROLE};
use crate::setup::Api;
use crate::transport::Transport;
use crate::transports::aeron::AeronIpc;
use crate::transports::iceoryx2::{self as ice, Iceoryx2};
use crate::transports::salias::{self as sal, Salias};
use crate::{openloop, pingpong, throughput, wake};

/// Plays `role`, as [`ROLE`] names it: `<system> <role>`.
pub fn child(role: &str) -> Result<(), Box<dyn Error>> {
    let a: Params = ROLE.params()?;
    pin(a.core)?;
    let barrier = Barrier::open(&a.name)?;
    let b = &barrier;
    let unknown = || format!("unknown role `{role}` in {}", ROLE.var());
    match role.split_once(' ').unwrap_or((role, "")) {
        ("salias", "wake-sender") => wake::send(&a, b, Salias::<Mpsc>::publisher(&a)),
        ("salias", "wake-receiver") => wake::receive(&a, b, Salias::<Mpsc>::subscriber(&a)),
        ("salias", "wake-receiver-fd") => wake::receive(&a, b, sal::Readiness::connect(&a)),
        ("iceoryx2", "wake-sender") => wake::send(&a, b, ice::EventSender::connect(&a)),
        ("iceoryx2", "wake-receiver") => wake::receive(&a, b, ice::EventReceiver::connect(&a)),
        // Every subscriber sees every message: more than one takes a fanout channel.
        ("salias", role) if a.subscribers > 1 => play::<Salias<Fanout>>(role, &a, b).ok_or_else(unknown)?,
        ("salias", role) => play::<Salias<Mpsc>>(role, &a, b).ok_or_else(unknown)?,
        ("aeron", role) => play::<AeronIpc>(role, &a, b).ok_or_else(unknown)?,
        ("iceoryx2", role) => play::<Iceoryx2>(role, &a, b).ok_or_else(unknown)?,
        ("spsc-floor", "publisher") => {
            let ring = spsc::Ring::open(&a);
            match a.api {
                Some(Api::FrameBatch) => throughput::publish(&a, b, ring.publisher::<spsc::FrameSlot>(&a)),
                _ => throughput::publish(&a, b, ring.publisher::<Msg64>(&a)),
            }
        }
        ("spsc-floor", "subscriber") => {
            let ring = spsc::Ring::open(&a);
            match a.api {
                Some(Api::FrameBatch) => throughput::subscribe(&a, b, ring.subscriber::<spsc::FrameSlot>()),
                _ => throughput::subscribe(&a, b, ring.subscriber::<Msg64>()),
            }
        }
        ("floor", "ping") => latency::floor_pinger(&a, b),
        ("floor", "pong") => latency::floor_ponger(&a, b),
        ("message-floor", "ping") => latency::message_floor_pinger(&a, b),
        ("message-floor", "pong") => latency::message_floor_ponger(&a, b),
        _ => return Err(unknown().into()),
    }
    Ok(())
}

/// Plays `role` of a throughput, ping-pong or open-loop run over `T`'s ends; none if
/// there is no such role.
fn play<T: Transport>(role: &str, a: &Params, b: &Barrier) -> Option<()> {
    match role {
        "publisher" => throughput::publish(a, b, T::publisher(a)),
        "subscriber" => throughput::subscribe(a, b, T::subscriber(a)),
        "ping" => pingpong::ping(a, b, T::pinger(a)),
        "pong" => pingpong::pong(a, b, T::ponger(a)),
        "ol-publisher" => openloop::publish(a, b, T::publisher(a)),
        "ol-subscriber" => openloop::subscribe(a, b, T::subscriber(a)),
        _ => return None,
    }
    Some(())
}
