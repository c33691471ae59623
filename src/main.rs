//! `lull`: the CLI and headless daemon. CLI parsing and glue only; the engine is the library.

mod cli;

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    match cli.run().await {
        Ok(code) => code,
        Err(err) => {
            eprintln!("lull: {err:#}");
            // 1 is `lull skills check` finding something: an error must not look like that.
            std::process::ExitCode::from(2)
        }
    }
}
