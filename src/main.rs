use std::process::ExitCode;

fn main() -> ExitCode {
    match agent::run() {
        Ok(code) => code,
        Err(err) => {
            if agent::is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            agent::term::error(&format!("{err:#}"));
            agent::exit_codes::ExitStatus::from_error(&err).into()
        }
    }
}
