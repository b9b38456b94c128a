//! `ynab-sim --listen 127.0.0.1:0 [--fixture FILE] [--state-file FILE] [--rate-limit N]`:
//! serves the simulator until killed; the first stdout line is `listening on http://ADDR`.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use ynab_sim::{Fixture, SimConfig, SimError, Simulator};

#[derive(Debug, Parser)]
#[command(about = "A local stand-in for the YNAB API")]
struct Args {
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Fixture JSON to load (ignored when --state-file already exists).
    #[arg(long)]
    fixture: Option<PathBuf>,
    /// Where to keep the state across restarts.
    #[arg(long)]
    state_file: Option<PathBuf>,
    /// Requests per token per rolling hour.
    #[arg(long, default_value_t = 200)]
    rate_limit: u32,
}

#[tokio::main]
async fn main() -> Result<(), SimError> {
    let args = Args::parse();
    let fixture = match &args.fixture {
        Some(path) => Some(serde_json::from_slice::<Fixture>(&std::fs::read(path)?)?),
        None => None,
    };
    let sim = Simulator::start(SimConfig {
        listen: args.listen,
        fixture,
        state_file: args.state_file,
        rate_limit: args.rate_limit,
    })
    .await?;
    println!("listening on {}", sim.base_url());
    tokio::signal::ctrl_c().await?;
    sim.stop();
    Ok(())
}
