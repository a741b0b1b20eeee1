use std::process::ExitCode;

fn main() -> ExitCode {
    match agent::run() {
        Ok(code) => code,
        Err(err) => {
            // Every way out writes the `--outcome` record (a no-op without one, or when the
            // launch wrote it already).
            if agent::is_broken_pipe(&err) {
                agent::launch::outcome::finish(0);
                return ExitCode::SUCCESS;
            }
            agent::term::error(&format!("{err:#}"));
            let status = agent::exit_codes::ExitStatus::from_error(&err);
            agent::launch::outcome::finish(i32::from(status.code()));
            status.into()
        }
    }
}
