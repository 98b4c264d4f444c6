//! The `flitforge` command. The command-line layer is in `src/cli/`; everything it does is a
//! library call.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
