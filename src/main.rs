//! `lull`: the CLI and headless daemon. CLI parsing and glue only; the engine is the library.

mod cli;

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    match cli.run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("lull: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
