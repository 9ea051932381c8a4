//! The command line.

use std::path::PathBuf;

use crate::params::Params;
use crate::placement::realtime_limit_ms;

pub struct Options {
    pub params: Params,
    pub sweep: bool,
    pub rates: Vec<f64>,
    pub rounds: usize,
    pub quiet_wait_s: u64,
    pub system: String,
    pub role: Option<(String, String, u32)>,
}

pub fn parse(args: &[String]) -> Result<Options, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut options = Options {
        params: Params {
            gateways: 2,
            subscribers: 1,
            rate: 1_000_000.0,
            duration_ms: 1_000,
            warmup_ms: 50,
            seed: 1,
            gateway_cores: vec![0],
            engine_core: 1.min(cores - 1),
            subscriber_cores: vec![0],
            gateway_wait: "yield".into(),
            subscriber_wait: "futex".into(),
            realtime: None,
            record: None,
        },
        sweep: false,
        rates: vec![100_000.0, 500_000.0, 1_000_000.0, 2_000_000.0, 4_000_000.0, 6_000_000.0],
        rounds: 5,
        quiet_wait_s: 2,
        system: "salias".into(),
        role: None,
    };
    let mut duration_given = false;
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        if flag == "--sweep" {
            options.sweep = true;
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag} takes a whole number, not {value:?}"))
        };
        let core_list = || -> Result<Vec<usize>, String> {
            value
                .split(',')
                .map(|c| match c.parse::<usize>() {
                    Ok(core) if core < cores => Ok(core),
                    _ => Err(format!("{flag} takes core numbers below {cores}, not {c:?}")),
                })
                .collect()
        };
        let p = &mut options.params;
        match flag.as_str() {
            "--gateways" => p.gateways = number()?.clamp(1, 32) as u32,
            "--subscribers" => p.subscribers = number()?.clamp(1, 32) as u32,
            "--rate" => {
                p.rate = value
                    .parse::<f64>()
                    .ok()
                    .filter(|r| r.is_finite() && *r >= 1.0)
                    .ok_or("--rate takes requests per second, at least 1")?
            }
            "--duration-ms" => {
                p.duration_ms = number()?.max(1);
                duration_given = true;
            }
            "--warmup-ms" => p.warmup_ms = number()?,
            "--seed" => p.seed = number()?,
            "--gateway-cores" => p.gateway_cores = core_list()?,
            "--engine-core" => p.engine_core = core_list()?[0],
            "--subscriber-cores" => p.subscriber_cores = core_list()?,
            "--record" => p.record = Some(PathBuf::from(value)),
            "--gateway-wait" => {
                if !["yield", "sleep"].contains(&value.as_str()) {
                    return Err(format!("--gateway-wait takes yield or sleep, not {value:?}"));
                }
                p.gateway_wait = value.clone();
            }
            "--realtime" => {
                p.realtime = Some(
                    value
                        .parse::<u32>()
                        .ok()
                        .filter(|n| (1..=99).contains(n))
                        .ok_or("--realtime takes a SCHED_RR priority from 1 to 99")?,
                )
            }
            "--subscriber-wait" => {
                if !["futex", "nap"].contains(&value.as_str()) {
                    return Err(format!("--subscriber-wait takes futex or nap, not {value:?}"));
                }
                p.subscriber_wait = value.clone();
            }
            "--rounds" => options.rounds = number()?.clamp(1, 100) as usize,
            "--quiet-wait-s" => options.quiet_wait_s = number()?,
            "--rates" => {
                options.rates = value
                    .split(',')
                    .map(|r| r.parse::<f64>().ok().filter(|r| r.is_finite() && *r >= 1.0))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("--rates takes a comma-separated list of requests per second")?
            }
            "--system" => {
                if !["salias", "mutex", "lockfree", "all"].contains(&value.as_str()) {
                    return Err(format!("--system takes salias, mutex, lockfree or all, not {value:?}"));
                }
                options.system = value.clone();
            }
            "--role" => {
                let name = args.next().ok_or("--role needs a role, a name and an index")?;
                let index = args
                    .next()
                    .and_then(|i| i.parse().ok())
                    .ok_or("--role needs a role, a name and an index")?;
                options.role = Some((value.clone(), name.clone(), index));
            }
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if options.sweep && !duration_given {
        options.params.duration_ms = 300;
    }
    if options.params.realtime.is_some()
        && let Some(limit_ms) = realtime_limit_ms()
        && options.params.duration_ms + options.params.warmup_ms > limit_ms
    {
        return Err(format!(
            "--realtime runs spin under SCHED_RR, and the kernel throttles real-time tasks after \
             {limit_ms} ms of every second (kernel.sched_rt_runtime_us): use --duration-ms of at most {}",
            limit_ms.saturating_sub(options.params.warmup_ms)
        ));
    }
    if options.params.warmup_ms >= options.params.duration_ms {
        return Err("--warmup-ms must be shorter than --duration-ms".into());
    }
    Ok(options)
}
