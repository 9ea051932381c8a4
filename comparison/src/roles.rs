//! The child processes: the arguments a role gets, what it reports, and which function
//! plays it.

use std::process::{Child, Command, Stdio};

use crate::baselines;
use crate::platform::pin;
use crate::shm::Barrier;
use crate::transports;
use crate::transports::{aeron, iceoryx2 as ice};

/// What a role process is told: its system, what to run, and its place; passed as the
/// command line after `--role ROLE NAME CORE --`.
pub struct ChildArgs {
    pub system: String,
    pub variant: String,
    pub publishers: u32,
    pub messages: u64,
    pub param: u64,
    pub index: u64,
    pub extra: String,
    pub stream: i32,
    /// Role-specific arguments after the common eight (open loop: interval ps, warm-up).
    pub rest: Vec<String>,
}

impl ChildArgs {
    pub fn parse(a: &[String]) -> ChildArgs {
        ChildArgs {
            system: a[0].clone(),
            variant: a[1].clone(),
            publishers: a[2].parse().unwrap(),
            messages: a[3].parse().unwrap(),
            param: a[4].parse().unwrap(),
            index: a[5].parse().unwrap(),
            extra: a[6].clone(),
            stream: a[7].parse().unwrap(),
            rest: a[8..].to_vec(),
        }
    }

    /// The command line `parse` reads back.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            self.system.clone(),
            self.variant.clone(),
            self.publishers.to_string(),
            self.messages.to_string(),
            self.param.to_string(),
            self.index.to_string(),
            self.extra.clone(),
            self.stream.to_string(),
        ];
        args.extend(self.rest.iter().cloned());
        args
    }
}

/// What a publisher process reports.
pub fn report_publisher(index: u64, elapsed: u64, attempts: u64, refused: u64) {
    println!("RESULT publisher {index} elapsed_ns {elapsed} attempts {attempts} refused {refused}");
}

pub fn report_subscriber(index: u64, elapsed: u64, received: u64) {
    println!("RESULT subscriber {index} elapsed_ns {elapsed} received {received}");
}

pub fn child(role: &str, name: &str, core: usize, args: &[String]) {
    pin(core);
    let a = ChildArgs::parse(args);
    let barrier = Barrier::open(name);
    match (role, a.system.as_str()) {
        ("publisher", "salias") => transports::salias::publisher(name, &a, &barrier),
        ("subscriber", "salias") => transports::salias::subscriber(name, &a, &barrier),
        ("publisher", "aeron") => aeron::publisher(&a, &barrier),
        ("subscriber", "aeron") => aeron::subscriber(&a, &barrier),
        ("publisher", "iceoryx2") => ice::publisher(name, &a, &barrier),
        ("subscriber", "iceoryx2") => ice::subscriber(name, &a, &barrier),
        ("publisher", "spsc-floor") => baselines::spsc_publisher(name, &a, &barrier),
        ("subscriber", "spsc-floor") => baselines::spsc_subscriber(name, &a, &barrier),
        ("ping", "salias") => transports::salias::pinger(name, &a, &barrier),
        ("pong", "salias") => transports::salias::ponger(name, &a, &barrier),
        ("ping", "aeron") => aeron::pinger(&a, &barrier),
        ("pong", "aeron") => aeron::ponger(&a, &barrier),
        ("ping", "iceoryx2") => ice::pinger(name, &a, &barrier),
        ("pong", "iceoryx2") => ice::ponger(name, &a, &barrier),
        ("ol-publisher", "salias") => transports::salias::ol_publisher(name, &a, &barrier),
        ("ol-subscriber", "salias") => transports::salias::ol_subscriber(name, &a, &barrier),
        ("ol-publisher", "aeron") => aeron::ol_publisher(&a, &barrier),
        ("ol-subscriber", "aeron") => aeron::ol_subscriber(&a, &barrier),
        ("ol-publisher", "iceoryx2") => ice::ol_publisher(name, &a, &barrier),
        ("ol-subscriber", "iceoryx2") => ice::ol_subscriber(name, &a, &barrier),
        ("ping", "floor") => baselines::floor_pinger(&a, &barrier),
        ("pong", "floor") => baselines::floor_ponger(&a, &barrier),
        _ => panic!("unknown role {role} for {}", a.system),
    }
}

pub fn spawn_role(role: &str, name: &str, core: usize, args: &[String]) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--role", role, name, &core.to_string(), "--"])
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}
