//! How a run is printed.

use crate::histograms::percentiles_line;
use crate::params::Params;
use crate::verify::Summary;

pub fn json_string(s: &str) -> String {
    format!("{s:?}")
}

pub fn print_summary(system: &str, p: &Params, s: &Summary) {
    println!(
        "{system}: offered {:.0} req/s, achieved {:.0} req/s; {} requests, {} events; refused offers: gateways {}, engine {}",
        s.offered, s.achieved, s.requests, s.events, s.refused_gateway, s.refused_engine
    );
    println!("  queueing   (send - planned)     {}", percentiles_line(&s.queueing));
    println!("  service    (arrival - send)     {}", percentiles_line(&s.service));
    println!("  total      (arrival - planned)  {}", percentiles_line(&s.total));
    println!("  to engine  (received - send)    {}", percentiles_line(&s.inbound));
    println!("  engine     (per request)        {}", percentiles_line(&s.processing));
    println!("  placement: {}", p.placement());
}
