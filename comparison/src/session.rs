//! One invocation: parse the flags, run the parts round by round, write the raw records
//! and print the summary.

use std::io::Write;
use std::time::Instant;

use crate::cli::Cli;
use crate::openloop::{OpenLoop, hist_json, openloop_run};
use crate::pingpong::{PING_WARMUP, Pings, pingpong_run};
use crate::plan::Plan;
use crate::platform::{catch_interrupt, cores, latency_cores};
use crate::report::{json_str, lock_version, machine, salias_revision, stats};
use crate::throughput::{Api, BATCH, Ctx, POLL_LIMIT, Run, throughput_run};
use crate::transports::aeron::{AERON_URI, start_aeron_driver};
use crate::transports::iceoryx2::ShmTidy;

/// Runs the comparison `cli` asks for; `command` is the command line, for the header.
pub fn run(cli: &Cli, command: &str) {
    cores();
    catch_interrupt();
    let plan = Plan::new(cli);
    let Plan {
        rounds,
        throughput: run_throughput,
        latency: run_latency,
        openloop: run_openloop,
        two_publishers,
        messages,
        pings,
        salias_ring,
        ice_buffer,
        ol_duration,
        ol_warmup,
        ..
    } = plan;
    let (setups, loads) = (&plan.setups, &plan.loads);
    let (openloop_systems, latency_systems) = (&plan.openloop_systems, &plan.latency_systems);
    let skip_aeron = !plan.aeron;

    // Leave /dev/shm and /tmp as found: iceoryx2 keeps a global management object in
    // /dev/shm and directories under /tmp/iceoryx2 after its last process exits.
    let _tidy = ShmTidy::snapshot();

    // The embedded Aeron C media driver, for the whole invocation.
    let driver = if skip_aeron { None } else { Some(start_aeron_driver()) };
    let mut ctx = Ctx {
        aeron_dir: driver.as_ref().map_or("-".into(), |d| d.dir().to_owned()),
        next_stream: 1000,
    };

    let out_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    std::fs::create_dir_all(&out_dir).unwrap();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let out_path = out_dir.join(format!("{stamp}.jsonl"));
    let mut out = std::fs::File::create(&out_path).unwrap();
    let versions = format!(
        "{{\"salias\":{},\"rusteron-client\":{},\"rusteron-media-driver\":{},\"aeron-c\":{},\"iceoryx2\":{},\"rustc\":{}}}",
        json_str(&salias_revision()),
        json_str(&lock_version("rusteron-client")),
        json_str(&lock_version("rusteron-media-driver")),
        json_str(&if skip_aeron {
            "not run".into()
        } else {
            rusteron_client::Aeron::version_full().to_owned()
        }),
        json_str(&lock_version("iceoryx2")),
        json_str(env!("CMP_RUSTC_VERSION")),
    );
    let config = format!(
        "{{\"messages_per_publisher\":{messages},\"pings\":{pings},\"ping_warmup\":{PING_WARMUP},\"poll_limit\":{POLL_LIMIT},\"batch\":{BATCH},\"salias_ring_bytes\":{salias_ring},\"aeron_uri\":{},\"aeron_driver\":\"embedded C driver in the parent process, threading SHARED, backoff idle, unpinned; non-sparse log files, clients pre-touch mapped memory, publication linger 200 ms\",\"iceoryx2_throughput\":\"ipc::Service, subscriber_max_buffer_size {ice_buffer}, safe overflow off, history 0, DiscardData + application retry\",\"iceoryx2_latency\":\"buffer 1, safe overflow on, history 0\",\"openloop\":{{\"loads_m_per_s\":[{}],\"duration_s\":{ol_duration},\"warmup_s\":{ol_warmup},\"systems\":\"salias FifoMpsc 1P1S offer (ring {salias_ring} B); aeron exclusive publication try_claim; iceoryx2 throughput service (buffer {ice_buffer}) loan_uninit, refused = reached no subscriber\",\"stamps\":\"CLOCK_MONOTONIC ns; words[0] planned, words[1] sent (the clock read that ended the wait; restamped on a retry); receive stamped per message in the poll callback\",\"histogram\":\"hdrhistogram 7, 1 ns .. 1000 s, 3 significant digits\",\"saturated\":\"plan ended > 10% late or queueing p50 > 100 us\"}}}}",
        json_str(AERON_URI),
        loads.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(",")
    );
    writeln!(
        out,
        "{{\"machine\":{},\"command\":{},\"versions\":{versions},\"rounds\":{rounds},\"config\":{config}}}",
        json_str(&machine()),
        json_str(command)
    )
    .unwrap();
    println!(
        "salias comparison on {}; {rounds} alternating rounds; raw data: {}",
        machine(),
        out_path.display()
    );
    println!("versions: {versions}");
    if !two_publishers {
        println!("(2P1S skipped: {} cores; pass --two-publishers to force)", cores());
    }

    let started = Instant::now();
    let mut results: Vec<Vec<Run>> = setups.iter().map(|_| Vec::new()).collect();
    for round in 0..if run_throughput { rounds } else { 0 } {
        let n = setups.len();
        for k in 0..n {
            let i = (k + round) % n;
            let setup = &setups[i];
            let run = throughput_run(setup, round, &mut ctx);
            writeln!(
                out,
                "{{\"bench\":\"throughput\",\"system\":{},\"label\":{},\"round\":{round},\"publishers\":{},\"messages_per_publisher\":{},\"published_per_s\":{:.0},\"delivered_per_s\":{:.0},\"refused_fraction\":{:.6},\"placement\":{}}}",
                json_str(if setup.system == "spsc-floor" { "spsc-floor" } else { setup.system }),
                json_str(&setup.label()),
                setup.publishers,
                setup.messages,
                run.published_per_s,
                run.delivered_per_s,
                run.refused,
                json_str(&run.placement)
            )
            .unwrap();
            out.flush().unwrap();
            eprintln!(
                "  round {}/{rounds} {:<44} delivered {:>7.2} M/s",
                round + 1,
                setup.label(),
                run.delivered_per_s / 1e6
            );
            results[i].push(run);
        }
        eprintln!(
            "throughput round {}/{rounds} done after {:.1?}",
            round + 1,
            started.elapsed()
        );
    }

    let mut latency: Vec<Vec<Pings>> = latency_systems.iter().map(|_| Vec::new()).collect();
    let mut pingpong_cores = [0, 0];
    for round in 0..if run_latency { rounds } else { 0 } {
        let n = latency_systems.len();
        for k in 0..n {
            let i = (k + round) % n;
            let system = latency_systems[i];
            let (p, cores) = pingpong_run(system, pings, round, &mut ctx);
            pingpong_cores = cores;
            writeln!(
                out,
                "{{\"bench\":\"pingpong\",\"system\":{},\"round\":{round},\"cores\":[{},{}],\"one_way_ns\":{{\"p50\":{},\"p90\":{},\"p99\":{},\"p99.9\":{},\"p99.99\":{},\"max\":{},\"count\":{}}}}}",
                json_str(system),
                cores[0],
                cores[1],
                p.rtt[0] / 2,
                p.rtt[1] / 2,
                p.rtt[2] / 2,
                p.rtt[3] / 2,
                p.rtt[4] / 2,
                p.rtt[5] / 2,
                p.count
            )
            .unwrap();
            out.flush().unwrap();
            latency[i].push(p);
        }
        eprintln!(
            "latency round {}/{rounds} done after {:.1?}",
            round + 1,
            started.elapsed()
        );
    }

    // Open loop, level by level; within a level the systems alternate round by round.
    let mut openloop: Vec<(f64, Vec<Vec<OpenLoop>>)> = Vec::new();
    let mut sweeping: Vec<bool> = openloop_systems.iter().map(|_| true).collect();
    for &load in if run_openloop { &loads[..] } else { &[] } {
        let active: Vec<usize> = (0..openloop_systems.len()).filter(|&i| sweeping[i]).collect();
        if active.is_empty() {
            break;
        }
        let mut runs: Vec<Vec<OpenLoop>> = openloop_systems.iter().map(|_| Vec::new()).collect();
        for round in 0..rounds {
            for k in 0..active.len() {
                let i = active[(k + round) % active.len()];
                let (system, param) = openloop_systems[i];
                let r = openloop_run(system, param, load * 1e6, (ol_duration, ol_warmup), round, &mut ctx);
                writeln!(
                    out,
                    "{{\"bench\":\"openloop\",\"system\":{},\"round\":{round},\"offered_per_s\":{:.0},\"achieved_per_s\":{:.0},\"duration_s\":{ol_duration},\"warmup_s\":{ol_warmup},\"refused_fraction\":{:.6},\"late_fraction\":{:.6},\"saturated\":{},\"placement\":{},\"queueing_ns\":{},\"service_ns\":{},\"total_ns\":{}}}",
                    json_str(system),
                    load * 1e6,
                    r.achieved_per_s,
                    r.refused,
                    r.late_fraction,
                    r.saturated(),
                    json_str(&r.placement),
                    hist_json(&r.hist[0]),
                    hist_json(&r.hist[1]),
                    hist_json(&r.hist[2])
                )
                .unwrap();
                out.flush().unwrap();
                eprintln!(
                    "  open loop {load:>5} M/s round {}/{rounds} {system:<9} total p50 {:>9} p99 {:>9} p99.9 {:>10} ns, sent at {:.2} M/s{}",
                    round + 1,
                    r.hist[2][0],
                    r.hist[2][2],
                    r.hist[2][3],
                    r.achieved_per_s / 1e6,
                    if r.saturated() { " (saturated)" } else { "" }
                );
                runs[i].push(r);
            }
        }
        // A system that saturated in the majority of this level's rounds stops here.
        for &i in &active {
            let saturated = runs[i].iter().filter(|r| r.saturated()).count();
            if saturated * 2 > runs[i].len() {
                sweeping[i] = false;
            }
        }
        openloop.push((load, runs));
        eprintln!("open loop {load} M/s done after {:.1?}", started.elapsed());
    }
    drop(driver);

    // ---- summary
    if run_throughput {
        println!(
            "\n{:<46} {:>26} {:>26} {:>9}  placement",
            "throughput, 64-byte messages", "published M/s med [min,max]", "delivered M/s med [min,max]", "refused"
        );
        for (setup, runs) in setups.iter().zip(&results) {
            let (p, p0, p1) = stats(&runs.iter().map(|r| r.published_per_s / 1e6).collect::<Vec<_>>());
            let (d, d0, d1) = stats(&runs.iter().map(|r| r.delivered_per_s / 1e6).collect::<Vec<_>>());
            let (refused, _, _) = stats(&runs.iter().map(|r| r.refused * 100.0).collect::<Vec<_>>());
            println!(
                "{:<46} {p:>9.2} [{p0:>6.2},{p1:>6.2}] {d:>11.2} [{d0:>6.2},{d1:>6.2}] {refused:>8.2}%  {}",
                setup.label(),
                runs[0].placement
            );
        }
        // Ratios of delivered rates, per round (the runs of a round ran back to back), then
        // the median and range over rounds.
        let find = |system: &str, api: Api, publishers: u32| {
            setups
                .iter()
                .position(|s| s.system == system && s.api == api && s.publishers == publishers)
        };
        let pairs = [
            (("salias", Api::Offer, 1), ("aeron", Api::TryClaim, 1)),
            (("salias", Api::Offer, 1), ("aeron", Api::Offer, 1)),
            (("salias", Api::Offer, 1), ("iceoryx2", Api::LoanUninit, 1)),
            (("salias", Api::Offer, 1), ("spsc-floor", Api::Batch, 1)),
            (("salias", Api::OfferBatch, 1), ("spsc-floor", Api::Batch, 1)),
            (("salias", Api::OfferBatch, 1), ("aeron", Api::TryClaim, 1)),
            (("salias", Api::Offer, 2), ("aeron", Api::TryClaim, 2)),
            (("salias", Api::Offer, 2), ("iceoryx2", Api::LoanUninit, 2)),
        ];
        println!("\nratios of delivered rates, median [min,max] of per-round ratios:");
        for (a, b) in pairs {
            if let (Some(i), Some(j)) = (find(a.0, a.1, a.2), find(b.0, b.1, b.2)) {
                let ratios: Vec<f64> = results[i]
                    .iter()
                    .zip(&results[j])
                    .map(|(x, y)| x.delivered_per_s / y.delivered_per_s)
                    .collect();
                let (m, lo, hi) = stats(&ratios);
                println!(
                    "  {:<32} / {:<32} {m:>6.2}× [{lo:.2}, {hi:.2}]",
                    format!("{} {}P1S {}", a.0, a.2, setups[i].variant()),
                    format!("{} {}P1S {}", b.0, b.2, setups[j].variant())
                );
            }
        }
    }
    if run_latency {
        println!(
            "\nping-pong one way (round trip / 2) between cores {} and {}, {pings} pings + {PING_WARMUP} warm-up × {rounds} rounds; ns, median over rounds [min,max] of p50; medians of the other percentiles:",
            pingpong_cores[0], pingpong_cores[1]
        );
        println!(
            "{:<10} {:>20} {:>8} {:>8} {:>8} {:>9} {:>9}",
            "system", "p50 [min,max]", "p90", "p99", "p99.9", "p99.99", "max"
        );
        let medians: Vec<f64> = latency
            .iter()
            .map(|runs| stats(&runs.iter().map(|p| p.rtt[0] as f64 / 2.0).collect::<Vec<_>>()).0)
            .collect();
        for (system, runs) in latency_systems.iter().zip(&latency) {
            let q = |k: usize| stats(&runs.iter().map(|p| p.rtt[k] as f64 / 2.0).collect::<Vec<_>>());
            let (p50, lo, hi) = q(0);
            println!(
                "{system:<10} {:>20} {:>8.0} {:>8.0} {:>8.0} {:>9.0} {:>9.0}",
                format!("{p50:.0} [{lo:.0},{hi:.0}]"),
                q(1).0,
                q(2).0,
                q(3).0,
                q(4).0,
                q(5).0
            );
        }
        let at = |s: &str| latency_systems.iter().position(|x| *x == s);
        if let Some(si) = at("salias") {
            for other in ["aeron", "iceoryx2", "floor"] {
                if let Some(oi) = at(other) {
                    let ratios: Vec<f64> = latency[si]
                        .iter()
                        .zip(&latency[oi])
                        .map(|(x, y)| x.rtt[0] as f64 / y.rtt[0] as f64)
                        .collect();
                    let (m, lo, hi) = stats(&ratios);
                    println!(
                        "  p50 latency salias / {other:<9} {m:>5.2}× [{lo:.2}, {hi:.2}]  (medians {:.0} / {:.0} ns)",
                        medians[si], medians[oi]
                    );
                }
            }
        }
    }
    if run_openloop && !openloop.is_empty() {
        let [a, b] = latency_cores();
        println!(
            "\nopen loop, 1P1S, publisher on core {a}, subscriber on core {b}, {ol_duration} s per level + {ol_warmup} s warm-up × {rounds} rounds;\nns, medians over rounds of each percentile (total = queueing + service):"
        );
        println!(
            "{:>7} {:<9} {:>8} {:>9} {:>9} {:>10} {:>10} {:>9} {:>9} {:>8} {:>6}",
            "M/s", "system", "sent M/s", "total p50", "p99", "p99.9", "max", "queue p50", "serv p50", "refused", "sat"
        );
        for (load, runs) in &openloop {
            for ((system, _), runs) in openloop_systems.iter().zip(runs) {
                if runs.is_empty() {
                    continue;
                }
                let m = |k: usize, j: usize| stats(&runs.iter().map(|r| r.hist[k][j] as f64).collect::<Vec<_>>()).0;
                let sent = stats(&runs.iter().map(|r| r.achieved_per_s / 1e6).collect::<Vec<_>>()).0;
                let refused = stats(&runs.iter().map(|r| r.refused * 100.0).collect::<Vec<_>>()).0;
                let saturated = runs.iter().filter(|r| r.saturated()).count();
                println!(
                    "{load:>7} {system:<9} {sent:>8.2} {:>9.0} {:>9.0} {:>10.0} {:>10.0} {:>9.0} {:>9.0} {refused:>7.2}% {saturated:>4}/{}",
                    m(2, 0),
                    m(2, 2),
                    m(2, 3),
                    m(2, 5),
                    m(0, 0),
                    m(1, 0),
                    runs.len()
                );
            }
        }
    }
    println!("\nraw data: {}", out_path.display());
}
